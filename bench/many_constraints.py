"""Millions of constraints: the LightTouch paper's lattice problem at 2^14, 2^16 and 2^17
coordinates with 1,000,000 pairs (m = 114,688; 524,288; 1,114,112 lattice edges), solved as a
user would, with defaults and only ``time_limit_s`` (``lighttouch solve``), FullTouch beside
LightTouch.

Each run is its own process (``python -m service.cli solve``), so its peak memory is its own
(``ru_maxrss`` of that child, by ``os.wait4``; runs recorded before this read the children's
maximum so far, and left it empty when a smaller run followed a larger one). From each
Result: the mixture's expected objective and violation, the certified ``lower_bound`` and
``relative_gap``, whether the answer is certified within 1% and 0.1% at its wall time,
iterations per second of the algorithm
(``iterations / solve_s``), constraint checks per iteration, and the time split (algorithm,
polish, lower bound). With ``--exact D`` the exact optimum of that size by Clarabel
(``bench/exact_optimum.py``, cached by problem hash under ``bench/cache/exact``) is recorded
next to the bound, so the certificate's tightness shows against the truth.

Usage::

    python bench/many_constraints.py --dims 14,17 --time-limits 600 [--exact 14]
        [--algorithms auto,fulltouch]

Writes ``bench/results/many_constraints.json`` (what ran, exactly: sizes, time limits,
algorithms, machine load) and ``many_constraints.png``. The problems are generated once under
``--cache-dir`` (``worker.datasets.lattice.write_problem``).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PAIRS = 1_000_000


def problem_directory(cache: Path, dims: int) -> Path:
    """The problem of 2^dims coordinates and :data:`PAIRS` pairs, written once."""
    from worker.datasets.lattice import write_problem

    directory = cache / f"d{dims}"
    if not (directory / "spec.json").exists():
        write_problem(directory, PAIRS, D=dims, seed=0)
    return directory


def run_solve(directory: Path, algorithm: str, time_limit: float) -> dict:
    """One ``lighttouch solve`` in its own process: the Result's figures and its peak memory."""
    spec = json.loads((directory / "spec.json").read_text())
    spec["solver"] = {"time_limit_s": time_limit}
    if algorithm != "auto":
        spec["solver"]["algorithm"] = algorithm
    spec_path = directory / f"spec_{algorithm}_{int(time_limit)}.json"
    spec_path.write_text(json.dumps(spec))
    out = directory / f"result_{algorithm}_{int(time_limit)}.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LIGHTTOUCH_DATA_ROOTS": str(directory)}
    began = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "service.cli", "solve", "-q", "-o",
                              str(out), str(spec_path)], env=env, cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    errors = child.stderr.read()
    _, code, usage = os.wait4(child.pid, 0)           # this child's own peak memory
    wall = time.perf_counter() - began
    if code != 0:
        return {"algorithm": algorithm, "time_limit_s": time_limit, "error": errors[-2000:]}
    return summary(json.loads(out.read_text()), algorithm, time_limit, wall, usage.ru_maxrss)


def summary(result: dict, algorithm: str, time_limit: float, wall: float,
            peak_kib: int | None) -> dict:
    """The figures of one Result (module docstring)."""
    stats = result["stats"]
    iterations = stats.get("iterations") or 0
    gap = stats.get("relative_gap")
    return {
        "algorithm": algorithm, "method": stats.get("method"), "time_limit_s": time_limit,
        "wall_s": wall, "solve_s": stats.get("solve_s"), "polish_s": stats.get("polish_s"),
        "polish_status": stats.get("polish_status"),
        "lower_bound_s": stats.get("lower_bound_s"),
        "lower_bound_status": stats.get("lower_bound_status"),
        "lower_bound_examples": stats.get("lower_bound_examples"),
        "objective": result["expected"]["objective"],
        "max_violation": result["expected"]["max_violation"],
        "projected_objective": (result.get("projected") or {}).get("objective"),
        "members": [member["kind"] for member in result["mixture"]],
        "lower_bound": stats.get("lower_bound"), "relative_gap": gap,
        "certified_1pct": gap is not None and gap <= 1e-2,
        "certified_0.1pct": gap is not None and gap <= 1e-3,
        "iterations": iterations,
        "iterations_per_s": iterations / stats["solve_s"] if stats.get("solve_s") else None,
        "checks_per_iteration": stats.get("constraint_checks", 0) / iterations
        if iterations else None,
        "peak_rss_mib": None if peak_kib is None else peak_kib / 1024,
    }


def exact_value(directory: Path, cache: Path) -> dict:
    """Clarabel's optimum of the problem (cached), with its seconds."""
    from bench.exact_optimum import exact_records
    from worker.problem.compile import DataSource, compile_problem
    from worker.settings import data_settings
    from worker.spec.models import parse_spec

    spec = parse_spec(json.loads((directory / "spec.json").read_text()))
    problem = compile_problem(spec, DataSource([directory], data_settings()))
    return exact_records(problem, cache)["clarabel"]


def _commit() -> str:
    """The code's commit (with ``+`` when the work tree differs from it)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return head + ("+" if dirty else "")


def figure(rows: list[dict], path: Path) -> None:
    """Relative gap and iterations per second by size, one marker per algorithm."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for algorithm in sorted({row["algorithm"] for row in rows}):
        mine = [row for row in rows if row["algorithm"] == algorithm and "error" not in row]
        m = [row["m"] for row in mine]
        left.scatter(m, [row["relative_gap"] or float("nan") for row in mine], label=algorithm)
        right.scatter(m, [row["iterations_per_s"] or float("nan") for row in mine],
                      label=algorithm)
    for axis, label in ((left, "certified relative gap"), (right, "iterations / s")):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("constraints m")
        axis.set_ylabel(label)
        axis.legend()
    left.axhline(1e-2, color="grey", linestyle=":")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="14,16,17")
    parser.add_argument("--time-limits", default="600")
    parser.add_argument("--algorithms", default="auto,fulltouch")
    parser.add_argument("--exact", default="14", help="dims whose exact optimum is solved")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "cache")
    parser.add_argument("--name", default="many_constraints")
    args = parser.parse_args(argv)
    path = RESULTS / f"{args.name}.json"
    for dims in map(int, args.dims.split(",")):
        directory = problem_directory(args.cache_dir / "many_constraints", dims)
        for limit in map(float, args.time_limits.split(",")):
            for algorithm in args.algorithms.split(","):
                commit = _commit()                    # the code the run imports
                row = run_solve(directory, algorithm, limit)
                row.update(dims=dims, d=2**dims, m=dims * 2**(dims - 1), pairs=PAIRS,
                           load_average=os.getloadavg()[0], commit=commit)
                record = _recorded(path, row=row)
                print(json.dumps(row), flush=True)
        if str(dims) in args.exact.split(","):
            value = exact_value(directory, args.cache_dir / "exact")
            record = _recorded(path, exact={str(dims): value})
    figure(record["runs"], RESULTS / f"{args.name}.png")


def _recorded(path: Path, row: dict | None = None, exact: dict | None = None) -> dict:
    """The results file with ``row`` added to its runs and ``exact`` to its exact optima,
    read and written under a lock, so that jobs run side by side (one per core) each add to
    what the other wrote."""
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = json.loads(path.read_text()) if path.exists() else {"runs": [], "exact": {}}
        record["runs"] += [row] if row is not None else []
        record["exact"].update(exact or {})
        path.write_text(json.dumps(record, indent=2) + "\n")
    return record


if __name__ == "__main__":
    main()
