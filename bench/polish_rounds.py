"""The polish's trust-region rounds from the answer of a ``bench/many_constraints.py`` job:
each round's seconds and objective, with the time split's ``slow`` rule and without it.

Loads the lattice problem of ``--dims`` (under ``--cache-dir``, as ``many_constraints.py``
wrote it) and the projected solution of its Result ``result_auto_<limit>.json``, then runs
:func:`worker.candidates.polish.polish` from it for ``--seconds``. Writes
``bench/results/polish_rounds.json``. Run::

    python -m bench.polish_rounds --dims 17 --limit 600 --seconds 120
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from bench.many_constraints import RESULTS, ROOT, problem_directory
from worker.candidates.polish import SLOW_RATE, polish
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec


def polish_run(problem, start: np.ndarray, seconds: float, slow_rate: float) -> dict:
    """One polish from ``start``: its rounds (seconds since its start, objective) and end."""
    began, rounds = time.perf_counter(), []
    out = polish(problem, start, began + seconds, 1e-6, slow_rate=slow_rate,
                 after_round=lambda w, value: rounds.append(
                     [time.perf_counter() - began, value]))
    return {"slow_rate": slow_rate, "status": out.status, "lps": out.rounds,
            "examples": out.examples, "start_objective": out.start_objective,
            "objective": out.objective, "seconds": out.seconds, "rounds": rounds}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=17)
    parser.add_argument("--limit", type=int, default=600, help="the job's time_limit_s")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "cache")
    args = parser.parse_args(argv)
    directory = problem_directory(args.cache_dir / "many_constraints", args.dims)
    spec = parse_spec(json.loads((directory / "spec.json").read_text()))
    problem = compile_problem(spec, DataSource([directory], data_settings()))
    result = json.loads((directory / f"result_auto_{args.limit}.json").read_text())
    start = np.array(result["projected"]["solution"])
    runs = [polish_run(problem, start, args.seconds, rate) for rate in (SLOW_RATE, 0.0)]
    record = {"dims": args.dims, "job_time_limit_s": args.limit, "seconds": args.seconds,
              "load_average": os.getloadavg()[0], "runs": runs}
    (RESULTS / "polish_rounds.json").write_text(json.dumps(record, indent=2) + "\n")
    for run in runs:
        print(json.dumps({k: v for k, v in run.items() if k != "rounds"}))


if __name__ == "__main__":
    main()
