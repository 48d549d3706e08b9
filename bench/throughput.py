"""LightTouch iterations per second on one core, before and after a change, side by side.

The lattice ranking problems of :mod:`worker.datasets.lattice` with the defaults' groups
(``aggregate: auto``, about sqrt(m) groups, dense p-update) and minibatches (§5.2), at the
paper's size (D = 12, 612,587 pairs: d = 4,096, m = 24,576) and at 2^17 (1,000,000 pairs:
d = 131,072, m = 1,114,112). Each measurement is its own process that imports the engine of
one source tree: ``--before`` (a commit, exported once under ``--cache``) or this checkout.
The two alternate, size by size and round by round, so both see the machine's load of the
same minutes; the ratio of the two is what to read, since the machine is shared. A process
runs ``--count`` iterations ``--repeats`` times after a warm-up and keeps the least CPU time
of its thread (the time it was scheduled, not the time it waited); the step is the fixed
eta_w = 180 of ``bench/iteration_bench.py``, so both trees make the same iterations.

Writes ``bench/results/<name>.json`` (``--name``, default ``throughput``: every measurement,
the machine's load before and after each) and ``<name>.png``. Run::

    nice -n 10 .venv/bin/python bench/throughput.py --before 8072f5a
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
#: (label, D, pairs, iterations per timing)
SIZES = (("paper (m = 24,576)", 12, 612_587, 200_000),
         ("2^17 (m = 1,114,112)", 17, 1_000_000, 20_000))
ETA_W = 180.0


def measure(dims: int, pairs: int, cache: Path, count: int, repeats: int) -> dict:
    """Iterations per CPU second of the engine this process imports (run in a child)."""
    import numpy as np
    from accuracy_bench import load

    from worker.algorithms.run.arrays import new_state, problem_arrays, run_config
    from worker.algorithms.run.groups import group_count, lazy_update
    from worker.kernels.distribution import init_distribution
    from worker.kernels.iteration import run_iterations
    from worker.kernels.layout import CHECKS, MODE_LIGHT

    problem = load(dims, pairs, cache)
    lazy = lazy_update(problem.m, "auto")
    arrays = problem_arrays(problem, group_count(problem.m, None, lazy))
    cfg = run_config(arrays, mode=MODE_LIGHT, gamma=1.0, eta_w=ETA_W, eta_p=1.0,
                     strong_convexity=0.0, minibatch=None, lazy=lazy)
    state = new_state(arrays, np.zeros(problem.d), 0)
    init_distribution(arrays, cfg, state, state.w, 1)
    run_iterations(arrays, cfg, state, count)               # compile, and leave the start
    checks = int(state.counters[CHECKS])
    seconds = []
    for _ in range(repeats):
        began = time.thread_time()
        run_iterations(arrays, cfg, state, count)
        seconds.append(time.thread_time() - began)
    return {"d": problem.d, "m": problem.m, "groups": int(arrays.group_ptr.shape[0] - 1),
            "iterations_per_s": count / min(seconds),
            "median_iterations_per_s": count / float(np.median(seconds)),
            "checks_per_iteration": (int(state.counters[CHECKS]) - checks) / (repeats * count),
            "w_sum": float(state.w.sum())}


def export_tree(revision: str, cache: Path) -> tuple[str, Path]:
    """The full commit of ``revision`` and its ``worker/`` package exported under ``cache``."""
    commit = subprocess.run(["git", "rev-parse", revision], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    tree = cache / f"tree_{commit[:12]}"
    if not (tree / "worker").is_dir():
        archive = subprocess.run(["git", "archive", "--format=tar", commit, "worker"], cwd=ROOT,
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
    return commit, tree


def run_child(tree: Path, dims: int, pairs: int, count: int, args) -> dict:
    """One :func:`measure` in a process importing the engine under ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_NUM_THREADS": "1"}
    command = [sys.executable, __file__, "--child", str(dims), str(pairs), str(count),
               "--repeats", str(args.repeats), "--cache", str(args.cache)]
    load = os.getloadavg()[0]
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(output.stdout.splitlines()[-1]) | {
        "load_before": load, "load_after": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> None:
    """Measure both trees at both sizes, alternating; write JSON and PNG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="8072f5a", help="the commit to compare against")
    parser.add_argument("--rounds", type=int, default=2, help="measurements per tree and size")
    parser.add_argument("--name", default="throughput", help="the results' file name")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=BENCH / "cache")
    parser.add_argument("--child", nargs=3, type=int, metavar=("D", "PAIRS", "COUNT"))
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(*args.child[:2], args.cache, args.child[2], args.repeats)))
        return
    commit, old_tree = export_tree(args.before, args.cache / "throughput")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    trees = {"before": (commit, old_tree), "after": (head, ROOT)}
    rows = []
    for label, dims, pairs, count in SIZES:
        for _ in range(args.rounds):
            for name, (revision, tree) in trees.items():
                row = {"size": label, "dims": dims, "pairs": pairs, "tree": name,
                       "commit": revision, "count": count}
                rows.append(row | run_child(tree, dims, pairs, count, args))
                print(json.dumps(rows[-1]), flush=True)
    report = {"command": " ".join(sys.argv), "rows": rows, "summary": summarize(rows)}
    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    (results / f"{args.name}.json").write_text(json.dumps(report, indent=1) + "\n")
    plot(report["summary"], results / f"{args.name}.png")


def summarize(rows: list[dict]) -> list[dict]:
    """Per size: the best iterations/s of each tree and their ratio."""
    table = []
    for label in dict.fromkeys(row["size"] for row in rows):
        best = {tree: max(r["iterations_per_s"] for r in rows
                          if r["size"] == label and r["tree"] == tree)
                for tree in ("before", "after")}
        table.append({"size": label, **best, "speedup": best["after"] / best["before"]})
    return table


def plot(summary: list[dict], path: Path) -> None:
    """Iterations per second before and after, one panel (linear scale) per size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, panels = plt.subplots(1, len(summary), figsize=(3 * len(summary), 3.5))
    for axes, row in zip(panels, summary, strict=True):
        axes.bar(["before", "after"], [row["before"], row["after"]], color=["C0", "C1"])
        axes.set_title(f"{row['size']}: {row['speedup']:.2f}x", fontsize=9)
    panels[0].set_ylabel("LightTouch iterations per CPU second")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
