"""LightTouch paper §6 on the paper-shaped lattice problem: FullTouch, LightTouch variants and
projected SGD, compared on objective, constraint checks and wall time (Figures 1-3).

The problem (:mod:`worker.datasets.lattice`): 2^12 lattice (d = 4096) with simplex
interpolation, m = 24,576 monotonicity constraints, box [-10, 10], pairwise hinge loss over
``--pairs`` synthetic pairs. It is generated once and cached under ``--cache-dir``.

Every run uses the same problem, seed and the paper's hyperparameters (§6.1: gamma = 1,
eta_w = 16, eta_p = 1/16, automatic minibatches with k_f = 2):

=====================  ===================================================================
run                    solver options
=====================  ===================================================================
fulltouch              ``algorithm: fulltouch`` (Algorithm 1, all m checked per iteration)
lighttouch_dense       ``p_update: dense``, ``aggregate: m`` (paper's O(m) p-update)
lighttouch_agg96       ``p_update: dense``, ``aggregate: 96`` (paper §6.3)
lighttouch_agg_auto    ``p_update: dense``, ``aggregate: auto`` (only if not 96 and not m)
lighttouch_lazy        ``p_update: lazy``, no aggregation (the product default)
projected_sgd          ``algorithm: projected_sgd`` (an exact projection every step)
=====================  ===================================================================

Each run keeps 1024 evenly spaced snapshots of the engine's running (suffix) average and
iterate. About a dozen averages, log-uniform in iterations, are projected exactly
(``worker.projection.project``) and scored as f(Π_g(w̄)), the paper's y-axis; the target is
within 1% of the exact optimum (Clarabel on the LP, ``bench/exact_optimum.py``, cached by
problem hash; at the paper's size it takes about 13 minutes the first time), and also 0.1%.
Optional extras: one full pipeline solve (``worker.pipeline.solve.solve``: shrinking LP and
projected mixture mean) and short kernel diagnostics with fixed minibatches.

Usage::

    python bench/lattice_bench.py                 # paper size, ~20 min on 2 cores
    python bench/lattice_bench.py --quick         # small smoke run (D = 8), ~1 min

Writes ``bench/results/lattice_bench.json`` and ``lattice_bench_fig{1,2,3}.png``
(``lattice_quick*`` with ``--quick``).
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import json
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")

from exact_optimum import exact_optimum
from lattice_config import RunOutcome, RunPlan, Settings, make_settings, parse_args
from lattice_figures import write_outputs
from lattice_metrics import (
    TOLERANCE,
    comparisons,
    run_metrics,
    tolerance_key,
)
from lattice_snapshots import projected_points, snapshot_series

from worker.algorithms.registry import run_algorithm
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.groups import group_count
from worker.algorithms.run.options import SolverOptions
from worker.datasets import lattice
from worker.pipeline.solve import solve
from worker.problem.compile import DataSource, compile_problem
from worker.problem.compiled import CompiledProblem
from worker.settings import data_settings
from worker.spec.models import parse_spec

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results"
REPO = BENCH_DIR.parent

#: Paper §6.3: 96 aggregated constraints of 256 each worked best.
PAPER_AGGREGATE = 96
#: Snapshots kept per run (the engine takes an average and an iterate at each).
SNAPSHOTS = 1024


# --------------------------------------------------------------------------- problem


def ensure_problem(settings: Settings) -> tuple[Path, float]:
    """Reuse the cached problem or generate it.

    Returns
    -------
    spec_path : pathlib.Path
    seconds : float
        Generation time (0 when reused).
    """
    directory = settings.cache_dir
    spec_path = directory / lattice.SPEC_NAME
    files = [spec_path, directory / "positive.npz", directory / "negative.npz"]
    if all(path.exists() for path in files):
        return spec_path, 0.0
    began = time.perf_counter()
    spec_path = lattice.write_problem(directory, settings.pairs, settings.dims,
                                        seed=settings.seed)
    return spec_path, time.perf_counter() - began


def load_problem(spec_path: Path) -> tuple[dict, CompiledProblem, float]:
    """Parse and compile the spec; returns (spec dict, problem, seconds)."""
    began = time.perf_counter()
    spec = json.loads(spec_path.read_text())
    problem = compile_problem(parse_spec(spec), DataSource([spec_path.parent], data_settings()))
    return spec, problem, time.perf_counter() - began


# --------------------------------------------------------------------------- plans


def solver_options(settings: Settings, **overrides) -> SolverOptions:
    """The paper's hyperparameters (gamma fixed at 1) with ``overrides``."""
    base = dict(iterations=settings.iterations, time_limit_s=settings.time_limit_s,
                seed=settings.seed, gamma=lattice.GAMMA, eta_w=lattice.ETA_W,
                eta_p=lattice.ETA_P, minibatch=None, candidates=2 * SNAPSHOTS)
    return SolverOptions(**(base | overrides))


def run_plans(settings: Settings, m: int) -> list[RunPlan]:
    """The configurations of the module docstring's table, in running order."""
    auto_groups = group_count(m, None, lazy=False)
    plans = [
        RunPlan("lighttouch_lazy", "LightTouch, lazy sublinear p-update, no aggregation",
                solver_options(settings, algorithm="lighttouch", p_update="lazy"),
                "iterations"),
        RunPlan("lighttouch_agg96", f"LightTouch, dense p-update, {PAPER_AGGREGATE} groups",
                solver_options(settings, algorithm="lighttouch", p_update="dense",
                               aggregate=PAPER_AGGREGATE), "iterations"),
    ]
    if auto_groups not in (PAPER_AGGREGATE, m):
        plans.append(RunPlan(
            "lighttouch_agg_auto", f"LightTouch, dense p-update, auto rule: {auto_groups} groups",
            solver_options(settings, algorithm="lighttouch", p_update="dense"), "iterations"))
    plans += [
        RunPlan("lighttouch_dense", f"LightTouch, dense O(m) p-update, no aggregation ({m})",
                solver_options(settings, algorithm="lighttouch", p_update="dense", aggregate=m,
                               time_limit_s=settings.dense_time_s), "time"),
        RunPlan("fulltouch", "FullTouch (all m constraints every iteration)",
                solver_options(settings, algorithm="fulltouch",
                               time_limit_s=settings.fulltouch_time_s), "iterations or time"),
        RunPlan("projected_sgd", "projected SGD, exact projection every step",
                solver_options(settings, algorithm="projected_sgd",
                               iterations=settings.psgd_iterations,
                               time_limit_s=settings.psgd_time_s), "time"),
    ]
    return plans


# --------------------------------------------------------------------------- measuring


def warm_up(problem: CompiledProblem, settings: Settings) -> float:
    """Run every kernel mode briefly so numba compilation is not timed; returns seconds."""
    began = time.perf_counter()
    for algorithm, p_update in (("lighttouch", "lazy"), ("lighttouch", "dense"),
                                ("fulltouch", "auto")):
        run_algorithm(problem, solver_options(settings, algorithm=algorithm, p_update=p_update,
                                              iterations=200, candidates=4))
    return time.perf_counter() - began


def load_average() -> float:
    """The 1-minute load average (other work on this machine skews timings)."""
    return os.getloadavg()[0]


def run_one(plan: RunPlan, problem: CompiledProblem, problem_view, count: int) -> RunOutcome:
    """Run one plan, then score its snapshots (projection time is not part of the run)."""
    before, cpu = load_average(), time.process_time()
    trajectory = run_algorithm(problem, plan.options)
    cpu, after = time.process_time() - cpu, load_average()
    series = snapshot_series(trajectory, problem_view)
    stats = dict(trajectory.as_stats(), cpu_s=cpu)
    outcome = RunOutcome(plan, stats, series, load={"before": before, "after": after})
    outcome.projected = projected_points(trajectory, problem, problem_view, series, count)
    del trajectory
    series.pop("index")
    return outcome


def print_run(outcome: RunOutcome) -> None:
    """One progress line per finished run."""
    stats, last = outcome.stats, outcome.projected[-1] if outcome.projected else {}
    print(f"  {outcome.plan.name:<20} {stats['iterations']:>9} it in {stats['solve_s']:7.1f} s "
          f"= {stats['iterations'] / stats['solve_s']:>9.0f} it/s, "
          f"{stats['constraint_checks'] / max(stats['iterations'], 1):>9.1f} checks/it, "
          f"f(Pi(avg)) = {last.get('projected_objective', float('nan')):.5f}", flush=True)


# --------------------------------------------------------------------------- extras


def pipeline_run(spec: dict, spec_path: Path, settings: Settings) -> dict:
    """One ``worker.pipeline.solve.solve`` of LightTouch (lazy): shrinking LP and projected mean."""
    spec = dict(spec, solver={
        "algorithm": "lighttouch", "iterations": settings.iterations, "seed": settings.seed,
        "gamma": lattice.GAMMA, "eta_w": lattice.ETA_W, "eta_p": lattice.ETA_P,
        "p_update": "lazy", "time_limit_s": settings.time_limit_s},
        output={"mixture": False, "project": True})
    began = time.perf_counter()
    result = solve(spec, roots=[spec_path.parent])
    wall = time.perf_counter() - began
    projected = result.projected
    return {
        "wall_s": wall,
        "solver": spec["solver"],
        "expected_objective": result.expected.objective,
        "expected_max_violation": result.expected.max_violation,
        "mixture_size": len(result.mixture),
        "mixture": [{"weight": m.weight, "iteration": m.iteration, "kind": m.kind,
                     "objective": m.objective, "max_violation": m.max_violation}
                    for m in result.mixture],
        "mean_objective": result.mean.objective,
        "mean_max_violation": result.mean.max_violation,
        "projected_objective": projected.objective if projected else None,
        "projected_max_violation": projected.max_violation if projected else None,
        "projected_status": projected.status if projected else None,
        "stats": result.stats,
    }


def diagnostics(problem: CompiledProblem, settings: Settings) -> dict:
    """Kernel throughput with fixed minibatches (k_f, k_g, k_p) = (2, 2, 1).

    Separates the cost of the p-update representation from the automatic minibatch sizes.
    """
    out = {}
    for name, p_update in (("lazy_fixed_221", "lazy"), ("agg96_fixed_221", "dense")):
        aggregate = PAPER_AGGREGATE if p_update == "dense" else None
        options = solver_options(settings, algorithm="lighttouch", p_update=p_update,
                                 aggregate=aggregate, minibatch=(2, 2, 1), candidates=4,
                                 time_limit_s=settings.diagnostics_s)
        stats = run_algorithm(problem, options).as_stats()
        out[name] = {"minibatch": [2, 2, 1], "p_update": p_update, "aggregate": aggregate,
                     "iterations": stats["iterations"], "solve_s": stats["solve_s"],
                     "iterations_per_s": stats["iterations"] / stats["solve_s"],
                     "checks_per_iteration":
                         stats["constraint_checks"] / max(stats["iterations"], 1)}
        print(f"  diagnostic {name}: {out[name]['iterations_per_s']:.0f} it/s", flush=True)
    return out


def machine_info() -> dict:
    """CPU, cores, memory, OS and library versions, and the repository commit."""
    import clarabel
    import numba
    import scipy

    cpu = next((line.split(":", 1)[1].strip() for line in _read_lines("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    memory = next((line.split(":", 1)[1].strip() for line in _read_lines("/proc/meminfo")
                   if line.startswith("MemTotal")), None)
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory": memory, "platform": platform.platform(),
        "python": platform.python_version(), "numpy": np.__version__,
        "scipy": scipy.__version__, "numba": numba.__version__,
        "clarabel": clarabel.__version__, "matplotlib": matplotlib.__version__,
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
    }


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=10, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# --------------------------------------------------------------------------- report


def run_record(outcome: RunOutcome, metrics: dict) -> dict:
    """Everything about one run for the JSON."""
    options = outcome.plan.options
    return {
        "description": outcome.plan.description,
        "budget": outcome.plan.budget,
        "options": {key: getattr(options, key) for key in (
            "algorithm", "iterations", "time_limit_s", "seed", "gamma", "eta_w", "eta_p",
            "minibatch", "aggregate", "p_update", "candidates")},
        "metrics": metrics,
        "stats": outcome.stats,
        "load_average_1min": outcome.load,
        "projected_snapshots": outcome.projected,
        "snapshots": outcome.series,
    }


def print_table(metrics: dict[str, dict], target: float) -> None:
    """The figures table on stdout."""
    print(f"\ntarget objective (exact optimum + {TOLERANCE:.0%}): {target:.5f}")
    print(f"{'run':<20} {'iters':>9} {'it/s':>9} {'cpu':>5} {'checks/it':>10} {'checks':>10} "
          f"{'t->1% s':>8} {'checks->1%':>11} {'viol(w̄)':>9} {'f(Π w̄)':>8}")
    for name, m in metrics.items():
        reached = m["to_target"][tolerance_key(TOLERANCE)]
        seconds, checks = reached["seconds"], reached["checks"]
        print(f"{name:<20} {m['iterations']:>9} {m['iterations_per_s']:>9.0f} "
              f"{m['cpu_share']:>5.2f} "
              f"{m['checks_per_iteration']:>10.1f} {m['constraint_checks']:>10.3g} "
              f"{_fmt(seconds, '8.1f')} {_fmt(checks, '11.3g')} "
              f"{m['final_average_violation']:>9.2g} {m['final_projected_objective']:>8.5f}")


def _fmt(value: dict | None, spec: str) -> str:
    width = int(spec.split(".")[0])
    return f"{value['interpolated']:{spec}}" if value else f"{'never':>{width}}"


def main(argv: list[str] | None = None) -> int:
    """Generate or reuse the problem, run every plan, write the JSON and the figures."""
    args = parse_args(argv)
    settings = make_settings(args)
    began = time.perf_counter()
    spec_path, generate_s = ensure_problem(settings)
    spec, problem, compile_s = load_problem(spec_path)
    print(f"problem d={problem.d} m={problem.m} n={problem.n} ({spec_path.parent}; generated "
          f"in {generate_s:.1f} s, compiled in {compile_s:.1f} s)", flush=True)
    warm_s = warm_up(problem, settings)
    problem_view = problem_arrays(problem, 0)
    outcomes = []
    for plan in run_plans(settings, problem.m):
        outcomes.append(run_one(plan, problem, problem_view, settings.projections))
        print_run(outcomes[-1])
    best_run = min(p["projected_objective"] for o in outcomes for p in o.projected)
    best = exact_optimum(problem, settings.cache_dir.parent / "exact")
    target = best + TOLERANCE * abs(best)
    metrics = {o.plan.name: run_metrics(o, best) for o in outcomes}
    print_table(metrics, target)
    extras = {"diagnostics": diagnostics(problem, settings) if settings.diagnostics_s > 0
              else None,
              "pipeline": pipeline_run(spec, spec_path, settings) if settings.pipeline
              else None}
    report = {
        "benchmark": "lattice_bench", "command": shlex.join([sys.executable, *sys.argv]),
        "machine": machine_info(),
        "settings": {k: str(v) if isinstance(v, Path) else v
                     for k, v in settings.__dict__.items()},
        "problem": {"d": problem.d, "m": problem.m, "n": problem.n, "spec": str(spec_path),
                    "generate_s": generate_s, "compile_s": compile_s, "warm_up_s": warm_s},
        "exact_optimum": best, "best_projected_objective": best_run,
        "target_objective": target, "tolerance": TOLERANCE,
        "comparisons": comparisons(metrics),
        "runs": {o.plan.name: run_record(o, metrics[o.plan.name]) for o in outcomes},
        **extras,
        "notes": NOTES,
        "total_s": time.perf_counter() - began,
    }
    write_outputs(report, outcomes, best, target, settings.prefix)
    return 0


NOTES = [
    "iterations_per_s = iterations / stats.solve_s (includes building the kernel arrays); "
    "iterations_per_s_second_half uses the snapshot clock over the second half of the run.",
    "Objective points are the engine's running (suffix) averages at snapshots, projected "
    "exactly; already feasible averages are their own projection and are not re-projected.",
    "Crossings are interpolated log-linearly between the projected snapshot above the "
    "target and the first one at or below it; first_snapshot is the coarser upper bound.",
    "Seconds are measured from the start of each run's driver (after array set-up and, for "
    "projected SGD, after its first projection); snapshot scoring is not timed.",
    "A ratio of kind 'lower bound' means the numerator run never reached the target; its "
    "whole spend is used.",
]



if __name__ == "__main__":
    sys.exit(main())
