"""The primal-dual method (``worker/candidates/primal_dual.py``) against the dual ascent
(``worker/candidates/dual_ascent.py``) from the answer of a ``bench/many_constraints.py`` job:
the answer and the certified bound at every refit, for each primal weight omega.

Loads the lattice problem of ``--dims`` (under ``--cache-dir``, as ``many_constraints.py``
wrote it) and the projected solution of its Result ``result_auto_<limit>.json``, then runs
the primal-dual method for ``--seconds`` with each ``--weights`` and the ascent from the
answer's margins for as long. Writes ``bench/results/<--name>.json`` and ``.png`` (default
``primal_dual``). Run::

    python -m bench.primal_dual --dims 14 --limit 120 --seconds 150 --weights 10,30,100
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bench.many_constraints import RESULTS, ROOT, problem_directory  # noqa: E402
from worker.candidates.dual_ascent import ascended_bound  # noqa: E402
from worker.candidates.dual_certificate import margin_weights  # noqa: E402
from worker.candidates.hinge_lp import signed_rows  # noqa: E402
from worker.candidates.primal_dual import primal_dual  # noqa: E402
from worker.problem.compile import DataSource, compile_problem  # noqa: E402
from worker.settings import data_settings  # noqa: E402
from worker.spec.models import parse_spec  # noqa: E402


def primal_dual_run(problem, signed, start: np.ndarray, seconds: float, weight: float) -> dict:
    """One run of the primal-dual method: (seconds, answer, bound) at every refit."""
    began, refits = time.perf_counter(), []
    found = primal_dual(problem, signed, start, began + seconds, 0.0, weight,
                        after_refit=lambda w, value, bound: refits.append(
                            [time.perf_counter() - began, value, bound]))
    return {"method": "primal_dual", "primal_weight": weight, "steps": found.steps,
            "objective": found.objective, "start_objective": found.start_objective,
            "bound": found.bound, "seconds": found.seconds, "refits": refits}


def ascent_run(problem, signed, start: np.ndarray, seconds: float) -> dict:
    """The dual ascent from the answer's margin weights, without its flat rule."""
    began = time.perf_counter()
    ascended = ascended_bound(problem, signed, margin_weights(signed.margins(start)), seconds,
                              flat_gain=0.0)
    return {"method": "ascent", "bound": ascended.value, "refits": ascended.refits,
            "seconds": time.perf_counter() - began}


def figure(record: dict, path: Path) -> None:
    """Answer and bound against seconds, one colour per primal weight, the ascent's end."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for run in record["runs"]:
        if run["method"] == "ascent":
            ax.axhline(run["bound"], color="grey", linestyle=":",
                       label=f"ascent's bound after {run['seconds']:.0f} s")
            continue
        t, f, b = np.array(run["refits"]).T
        line, = ax.plot(t, f, label=f"answer, omega {run['primal_weight']:g}")
        ax.plot(t, b, color=line.get_color(), linestyle="--", label="its bound")
    if record.get("optimum") is not None:
        ax.axhline(record["optimum"], color="black", linewidth=0.8, label="optimum")
    ax.set_xlabel("seconds")
    ax.set_ylabel("objective")
    ax.set_ylim(bottom=max(0.0, ax.get_ylim()[0]))
    ax.set_title(f"2^{record['dims']} lattice: primal-dual from a {record['job_time_limit_s']} s"
                 " job's answer")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=14)
    parser.add_argument("--limit", type=int, default=120, help="the job's time_limit_s")
    parser.add_argument("--seconds", type=float, default=150.0)
    parser.add_argument("--weights", default="10,30,100")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "cache")
    parser.add_argument("--name", default="primal_dual", help="the results' file name")
    args = parser.parse_args(argv)
    directory = problem_directory(args.cache_dir / "many_constraints", args.dims)
    spec = parse_spec(json.loads((directory / "spec.json").read_text()))
    problem = compile_problem(spec, DataSource([directory], data_settings()))
    signed = signed_rows(problem)
    result = json.loads((directory / f"result_auto_{args.limit}.json").read_text())
    start = np.array(result["projected"]["solution"])
    runs = [primal_dual_run(problem, signed, start, args.seconds, float(weight))
            for weight in args.weights.split(",")]
    runs.append(ascent_run(problem, signed, start, args.seconds))
    exact = json.loads((RESULTS / "many_constraints.json").read_text()).get("exact", {})
    optimum = exact.get(str(args.dims), {}).get("value")
    record = {"dims": args.dims, "job_time_limit_s": args.limit, "seconds": args.seconds,
              "answer": result["projected"]["objective"], "optimum": optimum,
              "load_average": os.getloadavg()[0], "runs": runs}
    (RESULTS / f"{args.name}.json").write_text(json.dumps(record, indent=2) + "\n")
    figure(record, RESULTS / f"{args.name}.png")
    for run in runs:
        print(json.dumps({k: v for k, v in run.items() if k != "refits"}))


if __name__ == "__main__":
    main()
