"""SVRG OL against the LightTouch family's rounds on the same partitioned ranking pairs:
``pairs`` of the lattice pairs (D = 8, ``worker.datasets.lattice``) as npy tables,
``solver.workers: 0``, 400,000 iterations, no polish, with the paper's step settings and with
the defaults; the projected objective, certified gap, rounds and algorithm time of each.

Usage::

    python bench/pair_designs.py DIRECTORY [--pairs 100000]

Writes ``bench/results/pair_designs.json`` (with the machine load of each run).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIMS = 8
ITERATIONS = 400_000


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    from worker import solve
    from worker.datasets.lattice import make_ranking_problem, problem_spec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--pairs", type=int, default=100_000)
    args = parser.parse_args(argv)
    directory = args.directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    positive, negative, _ = make_ranking_problem(args.pairs, DIMS, seed=0)
    np.save(directory / "pos.npy", positive.toarray())
    np.save(directory / "neg.npy", negative.toarray())
    rows = []
    for settings in ("paper", "defaults"):
        for algorithm in ("lighttouch", "svrg_ol"):
            spec = problem_spec(Path("p"), Path("n"), DIMS, seed=0, iterations=ITERATIONS,
                                algorithm=algorithm, name=f"lattice pairs D={DIMS}")
            spec["objective"]["data"] = {side: {"uri": (directory / f"{name}.npy").as_uri()}
                                         for side, name in (("positive", "pos"),
                                                            ("negative", "neg"))}
            spec["solver"].update(workers=0, polish=False, time_limit_s=3600)
            if settings == "defaults":
                for key in ("gamma", "eta_w", "eta_p"):
                    spec["solver"].pop(key)
            load = Path("/proc/loadavg").read_text().split()[:3]
            began = time.perf_counter()
            result = solve(spec, roots=[directory])
            stats = result.stats
            rows.append({"settings": settings, "algorithm": algorithm, "loadavg": load,
                         "wall_s": time.perf_counter() - began, "solve_s": stats["solve_s"],
                         "projected_objective": result.projected.objective,
                         "lower_bound": stats.get("lower_bound"),
                         "relative_gap": stats.get("relative_gap"),
                         "communication_rounds": stats["communication_rounds"]})
            print(json.dumps(rows[-1]), flush=True)
            (ROOT / "bench" / "results" / "pair_designs.json").write_text(
                json.dumps({"pairs": args.pairs, "dims": DIMS, "iterations": ITERATIONS,
                            "runs": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
