"""Accuracy per second against the exact optimum, on the lattice ranking problems.

For one problem of :mod:`worker.datasets.lattice` (``--dims`` D, ``--pairs`` n, seed 0; the
paper's size is D = 12, n = 612,587), the exact optimum comes from exact LP solvers
(:mod:`exact_optimum`: Clarabel, and optionally HiGHS's interior point and PDLP, cached by
problem hash, their seconds reported). Each first-order run then keeps snapshots of its
running average; each is projected exactly (the isotonic path, tens of milliseconds) and
scored on the full data. Reported per run: the seconds, iterations and constraint checks at
which the projected objective first came within 1% and within 0.1% of the exact optimum,
and its final gap. Runs:

* ``lighttouch_defaults``: nothing set but the time limit (``eta_w``, ``iterations``,
  ``gamma`` automatic);
* ``lighttouch_tuned``: the paper's gamma = 1 with the best fixed ``eta_w`` measured for the
  size (``--tuned-eta``), iterations automatic;
* ``fulltouch`` and ``projected_sgd``: defaults, the same time limit;
* ``lighttouch_polished``: what a solve does with defaults (``solver.polish``): LightTouch
  for half the time limit, then trust-region LP rounds from its last average's projection
  (:mod:`worker.candidates.polish`) until the tolerance or the time limit; a point per round.

Writes ``bench/results/accuracy_<D>.json`` and ``accuracy_<D>.png``. Run:
``.venv/bin/python bench/accuracy_bench.py --dims 10 --pairs 300000 --time 60``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from exact_optimum import exact_records

from worker.algorithms.registry import run_algorithm
from worker.algorithms.run.options import SolverOptions
from worker.datasets import lattice
from worker.kernels.objective import objective_value
from worker.pipeline.polishing import algorithm_options, polished_candidates
from worker.problem.compile import DataSource, compile_problem
from worker.problem.compiled import CompiledProblem
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import parse_spec
from worker.stats import merged

BENCH = Path(__file__).resolve().parent
TARGETS = (0.01, 0.001)


def load(dims: int, pairs: int, cache: Path) -> CompiledProblem:
    """The lattice problem of that size (generated once under ``cache``), compiled."""
    directory = cache / f"lattice_{dims}_{pairs}"
    spec_path = directory / lattice.SPEC_NAME
    if not spec_path.exists():
        lattice.write_problem(directory, pairs, dims, seed=0)
    return compile_problem(parse_spec(json.loads(spec_path.read_text())),
                           DataSource([directory], data_settings()))


def lattice_arguments(parser: argparse.ArgumentParser, dims: int, pairs: int) -> None:
    """Add the problem's ``--dims``, ``--pairs`` (with these defaults) and ``--cache``."""
    parser.add_argument("--dims", type=int, default=dims)
    parser.add_argument("--pairs", type=int, default=pairs)
    parser.add_argument("--cache", type=Path, default=BENCH / "cache")


def plans(time_limit: float, tuned_eta: float) -> dict[str, SolverOptions]:
    """The runs' options (see the module docstring)."""
    common = dict(time_limit_s=time_limit, until_converged=True, tolerance=1e-6,
                  candidates=400)
    return {
        "lighttouch_defaults": SolverOptions(algorithm="lighttouch", **common),
        "lighttouch_tuned": SolverOptions(algorithm="lighttouch", gamma=1.0, eta_w=tuned_eta,
                                          **common),
        "fulltouch": SolverOptions(algorithm="fulltouch", **common),
        "projected_sgd": SolverOptions(algorithm="projected_sgd", **common),
    }


def curve(problem: CompiledProblem, options: SolverOptions) -> tuple[list[dict], dict]:
    """Every snapshot average, projected exactly and scored: (points, the run's stats)."""
    return snapshot_points(problem, run_algorithm(problem, options))


def polished_curve(problem: CompiledProblem, options: SolverOptions) -> tuple[list[dict], dict]:
    """The algorithm's points for its share of the time, then one per polish round."""
    began = time.perf_counter()
    trajectory = run_algorithm(problem, algorithm_options(options))
    points, stats = snapshot_points(problem, trajectory)
    last = points[-1]
    rounds = []
    _, polished, _ = polished_candidates(
        problem, trajectory.candidates, trajectory.run.solve_s,
        began + options.time_limit_s, options.tolerance,
        lambda report: rounds.append({"seconds": report.elapsed_s,
                                      "iteration": last["iteration"],
                                      "checks": last["checks"], "objective": report.objective}))
    return points + rounds, merged(trajectory.run, polished)


def snapshot_points(problem: CompiledProblem, trajectory) -> tuple[list[dict], dict]:
    """The trajectory's snapshot averages, projected exactly and scored."""
    arrays, candidates = trajectory.arrays, trajectory.candidates
    points = []
    for k, kind in enumerate(candidates.kinds):
        if kind != "average":
            continue
        projected = project(candidates.solutions[k], problem.constraints, problem.lower,
                            problem.upper)
        points.append({"seconds": candidates.seconds[k], "iteration": candidates.iterations[k],
                       "checks": candidates.checks[k],
                       "objective": float(objective_value(arrays, projected.solution))})
    return points, trajectory.as_stats()


def first_within(points: list[dict], optimum: float, tolerance: float) -> dict | None:
    """The first point whose objective is within ``tolerance`` (relative) of the optimum."""
    return next((p for p in points if p["objective"] <= optimum * (1 + tolerance)), None)


def plot(runs: dict, optimum: float, path: Path) -> None:
    """Relative gap of the projected average against seconds, log-log, one line per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for name, run in runs.items():
        seconds = [p["seconds"] for p in run["points"]]
        gaps = [max(p["objective"] / optimum - 1, 1e-6) for p in run["points"]]
        axes.plot(seconds, gaps, label=name)
    for tolerance in TARGETS:
        axes.axhline(tolerance, color="grey", linestyle=":", linewidth=1)
    axes.set(xscale="log", yscale="log", xlabel="solver seconds",
             ylabel="projected objective / exact optimum - 1")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    """Exact optimum, every run, the table, JSON and PNG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lattice_arguments(parser, dims=10, pairs=300_000)
    parser.add_argument("--time", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--tuned-eta", type=float, default=64.0)
    parser.add_argument("--solvers", default="clarabel", help="exact solvers to time")
    args = parser.parse_args(argv)
    problem = load(args.dims, args.pairs, args.cache)
    exact = exact_records(problem, args.cache / "exact", tuple(args.solvers.split(",")))
    optimum = exact["clarabel"]["value"]
    runs = {}
    runs_to_do = dict(plans(args.time, args.tuned_eta))
    runs_to_do["lighttouch_polished"] = SolverOptions(algorithm="lighttouch",
                                                      time_limit_s=args.time,
                                                      until_converged=True)
    for name, options in runs_to_do.items():
        began = time.perf_counter()
        points, stats = (polished_curve if name == "lighttouch_polished" else curve)(
            problem, options)
        runs[name] = {"points": points, "wall_s": time.perf_counter() - began,
                      "stats": {k: v for k, v in stats.items() if np.isscalar(v)},
                      **{f"within_{t:g}": first_within(points, optimum, t) for t in TARGETS},
                      "final_gap": points[-1]["objective"] / optimum - 1 if points else None}
        hits = [runs[name][f"within_{t:g}"] for t in TARGETS]
        print(f"{name:22s} " + "  ".join(
            f"{t:.1%}: " + (f"{h['seconds']:.1f} s, {h['iteration']:,} it" if h else "never")
            for t, h in zip(TARGETS, hits, strict=True))
            + f"  final {runs[name]['final_gap']:+.3%}", flush=True)
    for solver, record in exact.items():
        print(f"{solver:22s} exact in {record['seconds']:.1f} s ({record['status']})")
    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    report = {"dims": args.dims, "pairs": args.pairs, "d": problem.d, "m": problem.m,
              "time_limit_s": args.time, "exact": exact, "optimum": optimum, "runs": runs}
    (results / f"accuracy_{args.dims}.json").write_text(json.dumps(report, indent=1) + "\n")
    plot(runs, optimum, results / f"accuracy_{args.dims}.png")


if __name__ == "__main__":
    main()
