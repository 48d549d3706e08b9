"""The dual certificate raised by supergradient ascent, by the seconds it is given, from the
answer of one ``bench/many_constraints.py`` run (its Result's projected solution).

Usage::

    python bench/dual_ascent.py --dims 17 --seconds 300 \\
        [--result bench/cache/many_constraints/d17/result_auto_600.json]

Appends to ``bench/results/dual_ascent.json``: the size, the answer's objective, and for each
time limit the bound reached, the seconds taken and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from bench.many_constraints import RESULTS, ROOT, _commit, problem_directory

CACHE = ROOT / "bench" / "cache" / "many_constraints"


def trace(dims: int, result: Path, limits: list[float]) -> dict:
    """The ascent from the margins of ``result``'s projected answer for each of ``limits``."""
    from worker.candidates.dual_ascent import ascended_bound
    from worker.candidates.dual_certificate import margin_weights
    from worker.candidates.hinge_lp import signed_rows
    from worker.problem.compile import DataSource, compile_problem
    from worker.settings import data_settings
    from worker.spec.models import parse_spec

    directory = problem_directory(CACHE, dims)
    spec = parse_spec(json.loads((directory / "spec.json").read_text()))
    problem = compile_problem(spec, DataSource([directory], data_settings()))
    projected = json.loads(result.read_text())["projected"]
    signed = signed_rows(problem)
    alpha = margin_weights(signed.margins(np.array(projected["solution"])))
    rows = []
    for seconds in limits:
        began = time.perf_counter()
        ascended = ascended_bound(problem, signed, alpha, seconds, flat_gain=0.0)
        rows.append({"seconds_limit": seconds, "seconds": time.perf_counter() - began,
                     "bound": ascended.value, "refits": ascended.refits,
                     "load_average": os.getloadavg()[0]})
        print(json.dumps(rows[-1]), flush=True)
    return {"dims": dims, "m": problem.m, "result": str(result.relative_to(ROOT)),
            "objective": projected["objective"], "commit": _commit(), "runs": rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=17)
    parser.add_argument("--seconds", default="300", help="time limits, comma separated")
    parser.add_argument("--result", type=Path, help="a many_constraints Result (default: "
                        "its 600 s LightTouch run of that size)")
    args = parser.parse_args(argv)
    result = args.result or CACHE / f"d{args.dims}" / "result_auto_600.json"
    path = RESULTS / "dual_ascent.json"
    record = json.loads(path.read_text()) if path.exists() else {"traces": []}
    record["traces"].append(trace(args.dims, result.resolve(),
                                  [float(s) for s in args.seconds.split(",")]))
    path.write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
