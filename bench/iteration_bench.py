"""What one LightTouch iteration costs, part by part, on the lattice ranking problem.

At one problem size (``--dims`` D, ``--pairs`` n; the paper's is D = 12, n = 612,587) the
compiled parts of an iteration (:mod:`worker.kernels.iteration`) are timed in CPU seconds of
this thread, so that other processes on the machine disturb them less than wall time:

* ``objective``: the mean subgradient of k_f = 2 sampled examples;
* ``constraint_step``: drawing k_g = 2 groups from p and the most violated row of each;
* ``p_update``: checking k_p = 2 groups and moving p (dense or lazy, as the default picks);
* ``apply_step``: w <- clip(w - eta direction) with the lazy running average;
* ``iteration``: whole iterations with the §5.2 minibatch rule, as a default run makes them.

Each is measured three times in one run: with the rows as the kernels receive them
(:func:`worker.algorithms.run.arrays.problem_arrays` pads the examples to a fixed width and
stores the lattice's constraints as difference rows, ``a_scale > 0``), with the constraints
read with their coefficients (``a_scale = 0``), and with every row read through its CSR row
pointers (``x_width = a_width = 0``), so the ratios show what each layout saves. Writes
``bench/results/iteration_<D>.json`` and ``.png``. Run:
``.venv/bin/python bench/iteration_bench.py --dims 12 --pairs 612587``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from accuracy_bench import lattice_arguments, load
from numba import njit

from worker.algorithms.run.arrays import new_state, problem_arrays, run_config
from worker.algorithms.run.groups import group_count, lazy_update
from worker.kernels.distribution import init_distribution, update_distribution
from worker.kernels.iteration import (
    _apply_step,
    draw_examples,
    objective_direction,
    run_iterations,
    sampled_violations,
)
from worker.kernels.layout import CHECKS, ITERATION, MODE_LIGHT

BENCH = Path(__file__).resolve().parent
PARTS = ("objective", "constraint_step", "p_update", "apply_step")
#: The step scale of the timed iterations (what eta_w "auto" measures at the paper's size).
ETA_W = 180.0


@njit
def _time_part(p, cfg, s, count, part):
    """Run one part ``count`` times (part: index into PARTS), advancing t."""
    for _ in range(count):
        t = s.counters[ITERATION]
        if part == 0:
            draw_examples(p, s, 2)
            objective_direction(p, cfg, s, 2, t)
        elif part == 1:
            sampled_violations(p, cfg, s, 2, t)
        elif part == 2:
            update_distribution(p, cfg, s, 2, t)
        else:
            draw_examples(p, s, 2)
            n_f = objective_direction(p, cfg, s, 2, t)
            _apply_step(p, cfg, s, 0.0, n_f, 0, t)
        s.counters[ITERATION] = t + 1


def _cpu_seconds(run, repeats: int) -> float:
    """The least CPU time of this thread over ``repeats`` calls of ``run``."""
    best = np.inf
    for _ in range(repeats):
        began = time.thread_time()
        run()
        best = min(best, time.thread_time() - began)
    return best


def measure(arrays, d: int, lazy: bool, count: int, repeats: int) -> dict:
    """Microseconds per call of every part and per whole iteration, and checks per iteration."""
    cfg = run_config(arrays, mode=MODE_LIGHT, gamma=1.0, eta_w=ETA_W, eta_p=1.0,
                     strong_convexity=0.0, minibatch=None, lazy=lazy)
    state = new_state(arrays, np.zeros(d), 0)
    init_distribution(arrays, cfg, state, state.w, 1)
    run_iterations(arrays, cfg, state, count)              # compile, and leave the start
    report = {}
    for index, part in enumerate(PARTS):
        _time_part(arrays, cfg, state, 1, index)
        seconds = _cpu_seconds(lambda i=index: _time_part(arrays, cfg, state, count, i), repeats)
        report[f"{part}_us"] = 1e6 * seconds / count
    checks = int(state.counters[CHECKS])
    seconds = _cpu_seconds(lambda: run_iterations(arrays, cfg, state, count), repeats)
    report["iteration_us"] = 1e6 * seconds / count
    report["checks_per_iteration"] = (int(state.counters[CHECKS]) - checks) / (repeats * count)
    report["iterations_per_s"] = count / seconds
    return report


def main(argv: list[str] | None = None) -> None:
    """Time every layout, print the table, write JSON and PNG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lattice_arguments(parser, dims=12, pairs=612_587)
    parser.add_argument("--count", type=int, default=100_000, help="calls per timing")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    problem = load(args.dims, args.pairs, args.cache)
    lazy = lazy_update(problem.m, "auto")
    groups = group_count(problem.m, None, lazy)
    arrays = problem_arrays(problem, groups)
    layouts = {"difference rows": arrays,
               "two-entry rows": arrays._replace(a_scale=0.0),
               "CSR rows": arrays._replace(x_width=0, a_width=0, a_scale=0.0)}
    reports = {name: measure(a, problem.d, lazy, args.count, args.repeats)
               for name, a in layouts.items()}
    for name, report in reports.items():
        print(f"{name:18s} " + "  ".join(f"{k} {v:,.2f}" for k, v in report.items()))
    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    report = {"dims": args.dims, "pairs": args.pairs, "d": problem.d, "m": problem.m,
              "groups": groups, "lazy_p_update": lazy, "eta_w": ETA_W, "layouts": reports}
    (results / f"iteration_{args.dims}.json").write_text(json.dumps(report, indent=1) + "\n")
    plot(reports, results / f"iteration_{args.dims}.png")


def plot(layouts: dict, path: Path) -> None:
    """Microseconds of each part and of a whole iteration, one bar group per layout."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [*PARTS, "iteration"]
    figure, axes = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(layouts)
    for k, (layout, report) in enumerate(layouts.items()):
        axes.bar(np.arange(len(names)) + k * width, [report[f"{n}_us"] for n in names],
                 width, label=layout)
    axes.set_xticks(np.arange(len(names)) + width * (len(layouts) - 1) / 2, names)
    axes.set_ylabel("CPU microseconds")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
