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
Optional extras: one full pipeline solve (``worker.solve.solve``: shrinking LP and projected
mixture mean) and short kernel diagnostics with fixed minibatches.

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

import argparse
import json
import math
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from exact_optimum import exact_optimum

from worker.algorithms.arrays import problem_arrays
from worker.algorithms.groups import group_count
from worker.algorithms.options import SolverOptions, Trajectory
from worker.algorithms.registry import run_algorithm
from worker.candidates.scores import evaluate_point
from worker.datasets import lattice
from worker.kernels.constraints import max_violation
from worker.pipeline.solve import solve
from worker.problem.compile import compile_problem
from worker.problem.compiled import CompiledProblem
from worker.projection import project
from worker.spec.models import parse_spec

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results"
REPO = BENCH_DIR.parent

#: Paper §6.3: 96 aggregated constraints of 256 each worked best.
PAPER_AGGREGATE = 96
#: Issue 2 targets (single thread, this machine).
TARGET_ITERATIONS_PER_S = 200_000
TARGET_CHECKS_RATIO = 10.0
#: "Reached" means within this relative distance of the exact optimum.
TOLERANCE = 0.01
#: Snapshots kept per run (the engine takes an average and an iterate at each).
SNAPSHOTS = 1024
#: A point counts as feasible (its projection is itself) at or below this violation.
FEASIBLE_TOL = 1e-12
#: Projected snapshots closer than this factor in iterations are redundant.
MIN_SPACING = 1.15
#: Relative distances to the exact optimum at which crossings are also reported.
TOLERANCES = (0.001, 0.01, 0.02, 0.05, 0.10)
#: Plot floor for violations (zero cannot be drawn on a log axis).
VIOLATION_FLOOR = 1e-10


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Settings:
    """Sizes and budgets of one benchmark invocation.

    Attributes
    ----------
    pairs, dims, seed : int
        Problem size (n pairs, D features so d = 2**D) and the seed of data and solver.
    iterations : int
        Iteration budget of every run but projected SGD.
    time_limit_s : float
        Safety time limit of the runs that should finish their iterations.
    fulltouch_time_s, dense_time_s, psgd_time_s : float
        Time budgets of FullTouch, dense LightTouch without aggregation and projected SGD.
    psgd_iterations : int
        Iteration budget of projected SGD (its time budget normally stops it first).
    projections : int
        Snapshot averages projected per run.
    diagnostics_s : float
        Time budget of each kernel diagnostic run (0 skips them).
    pipeline : bool
        Also run ``worker.solve.solve`` once for LightTouch (lazy).
    prefix : str
        Output file prefix under ``bench/results``.
    cache_dir : pathlib.Path
        Where the generated problem is cached.
    """

    pairs: int
    dims: int
    seed: int
    iterations: int
    time_limit_s: float
    fulltouch_time_s: float
    dense_time_s: float
    psgd_time_s: float
    psgd_iterations: int
    projections: int
    diagnostics_s: float
    pipeline: bool
    prefix: str
    cache_dir: Path


@dataclass(frozen=True)
class RunPlan:
    """One solver configuration to benchmark.

    Attributes
    ----------
    name : str
        Key in the JSON and plot legend.
    description : str
        What the configuration is, in words.
    options : SolverOptions
        Exactly what ``run_algorithm`` receives.
    budget : str
        How the run is stopped ("iterations" or "time").
    """

    name: str
    description: str
    options: SolverOptions
    budget: str


@dataclass
class RunOutcome:
    """Measurements of one run.

    Attributes
    ----------
    plan : RunPlan
    stats : dict
        The trajectory's ``stats`` (counters, solve seconds, minibatch means).
    series : dict
        Per-snapshot lists: iterations, checks, seconds, violations of average and iterate.
    projected : list of dict
        The projected snapshot averages: iteration, checks, seconds, window, objective
        before and after projection, violation, projection method, status and seconds.
    load : dict
        1-minute load average before and after the run.
    """

    plan: RunPlan
    stats: dict
    series: dict
    projected: list[dict] = field(default_factory=list)
    load: dict = field(default_factory=dict)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=None, help="n pairs (default 612,587)")
    parser.add_argument("--dims", type=int, default=None, help="D features (default 12)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="iteration budget per run (default 2,000,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small smoke run (D = 8)")
    parser.add_argument("--time-limit", type=float, default=600.0,
                        help="safety limit (s) of runs meant to finish their iterations")
    parser.add_argument("--fulltouch-time", type=float, default=None,
                        help="FullTouch time budget, s (default 240)")
    parser.add_argument("--dense-time", type=float, default=None,
                        help="dense non-aggregated LightTouch time budget, s (default 150)")
    parser.add_argument("--psgd-time", type=float, default=None,
                        help="projected SGD time budget, s (default 120)")
    parser.add_argument("--projections", type=int, default=12,
                        help="snapshot averages projected per run")
    parser.add_argument("--diagnostics-time", type=float, default=None,
                        help="budget (s) of each fixed-minibatch diagnostic; 0 skips")
    parser.add_argument("--no-pipeline", action="store_true",
                        help="skip the full worker.solve.solve run")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="problem cache (default: $TMPDIR/lighttouch-bench)")
    return parser.parse_args(argv)


def make_settings(args: argparse.Namespace) -> Settings:
    """Fill the defaults of the paper-size or the ``--quick`` run."""
    quick = args.quick

    def pick(value, full, small):
        return value if value is not None else (small if quick else full)

    pairs = pick(args.pairs, lattice.PAPER_PAIRS, 20_000)
    dims = pick(args.dims, lattice.PAPER_DIMS, 8)
    cache_root = args.cache_dir or Path(tempfile.gettempdir()) / "lighttouch-bench"
    return Settings(
        pairs=pairs, dims=dims, seed=args.seed,
        iterations=pick(args.iterations, 2_000_000, 100_000),
        time_limit_s=args.time_limit,
        fulltouch_time_s=pick(args.fulltouch_time, 240.0, 30.0),
        dense_time_s=pick(args.dense_time, 150.0, 30.0),
        psgd_time_s=pick(args.psgd_time, 120.0, 10.0),
        psgd_iterations=1024,
        projections=args.projections,
        diagnostics_s=pick(args.diagnostics_time, 30.0, 5.0),
        pipeline=not args.no_pipeline,
        prefix="lattice_quick" if quick else "lattice_bench",
        cache_dir=cache_root / f"lattice-D{dims}-n{pairs}-seed{args.seed}",
    )


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
    problem = compile_problem(parse_spec(spec), [spec_path.parent])
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


def average_windows(iterations: list[int]) -> list[int]:
    """Number of iterates in each snapshot's running average.

    Replays the documented rule of ``Driver.keep_average_recent`` (the average restarts after
    a snapshot at iteration t once t + 1 >= 2 * start; start is 1-based) with a fixed gamma,
    so no gamma checkpoint restarts it.

    Parameters
    ----------
    iterations : list of int
        Iterations of the successive average snapshots (iterations done).

    Returns
    -------
    list of int
    """
    start, windows = 1, []
    for t in iterations:
        windows.append(t + 1 - start)
        if t + 1 >= 2 * start:
            start = t + 1
    return windows


def snapshot_series(trajectory: Trajectory, problem_view) -> dict:
    """Per-snapshot counters and violations of the average and the iterate.

    Parameters
    ----------
    trajectory : Trajectory
    problem_view : ProblemArrays
        ``problem_arrays(problem, 0)``.

    Returns
    -------
    dict of lists
        ``iterations``, ``checks``, ``seconds``, ``window`` and ``violation`` of the averages,
        and ``iterate_violation`` (the iterate taken at the same snapshot, if any).
    """
    cands = trajectory.candidates
    averages = [k for k, kind in enumerate(cands.kinds) if kind == "average"]
    iterates = {cands.iterations[k]: k for k, kind in enumerate(cands.kinds)
                if kind == "iterate"}
    windows = average_windows([cands.iterations[k] for k in averages])
    # a run stopped by its deadline repeats the snapshot of its last iteration: keep the first
    first = [q for q, k in enumerate(averages)
             if q == 0 or cands.iterations[k] != cands.iterations[averages[q - 1]]]
    averages, windows = [averages[q] for q in first], [windows[q] for q in first]
    iterations = [cands.iterations[k] for k in averages]

    def violation(k):
        return float(max_violation(problem_view, cands.solutions[k]))

    return {
        "index": averages,
        "iterations": iterations,
        "checks": [cands.checks[k] for k in averages],
        "seconds": [cands.seconds[k] for k in averages],
        "window": windows,
        "violation": [violation(k) for k in averages],
        "iterate_violation": [violation(iterates[t]) if t in iterates else None
                              for t in iterations],
    }


def choose_projections(series: dict, count: int) -> list[int]:
    """Positions (into the series) of about ``count`` snapshots, log-uniform in iterations.

    Near each log-spaced target the snapshot whose average spans the largest share of the
    run is taken (suffix averages just after a restart span few iterates); the last snapshot
    is always included, and of two picks within ``MIN_SPACING`` of each other in iterations
    only the later one is kept.

    Parameters
    ----------
    series : dict
        From :func:`snapshot_series`.
    count : int

    Returns
    -------
    list of int
        Increasing positions.
    """
    its = np.asarray(series["iterations"], dtype=float)
    if its.size == 0:
        return []
    share = np.asarray(series["window"], dtype=float) / np.maximum(its, 1.0)
    targets = np.geomspace(max(its[0], 1.0), its[-1], max(count, 1))
    half_step = 0.5 * math.log(its[-1] / max(its[0], 1.0)) / max(count - 1, 1)
    chosen = {its.size - 1}
    for target in targets:
        distance = np.abs(np.log(np.maximum(its, 1.0) / target))
        near = np.flatnonzero(distance <= half_step + 1e-12)
        if near.size == 0:
            chosen.add(int(np.argmin(distance)))
            continue
        best = near[np.lexsort((distance[near], -share[near]))[0]]
        chosen.add(int(best))
    ordered = sorted(chosen)
    return [q for k, q in enumerate(ordered)
            if k + 1 == len(ordered) or its[ordered[k + 1]] > MIN_SPACING * max(its[q], 1.0)]


def project_snapshot(problem: CompiledProblem, problem_view, solution: np.ndarray) -> dict:
    """f and violation of ``solution`` and of its exact projection Π_g.

    A feasible point is its own projection, so it is not projected again.
    """
    objective, violation = evaluate_point(problem_view, problem, solution)
    record = {"objective": objective, "violation": violation}
    if violation <= FEASIBLE_TOL:
        return record | {"projected_objective": objective, "projected_violation": violation,
                         "method": "feasible", "status": "optimal", "projection_s": 0.0}
    projection = project(solution, problem.constraints, problem.lower, problem.upper)
    projected_objective, projected_violation = evaluate_point(problem_view, problem,
                                                              projection.solution)
    return record | {"projected_objective": projected_objective,
                     "projected_violation": projected_violation, "method": projection.method,
                     "status": projection.status, "projection_s": projection.seconds}


def projected_points(trajectory: Trajectory, problem: CompiledProblem, problem_view,
                     series: dict, count: int) -> list[dict]:
    """Project the chosen snapshot averages; one record per point, by iteration."""
    records = []
    for position in choose_projections(series, count):
        solution = trajectory.candidates.solutions[series["index"][position]]
        record = {key: series[key][position]
                  for key in ("iterations", "checks", "seconds", "window")}
        records.append(record | project_snapshot(problem, problem_view, solution))
    return records


def run_one(plan: RunPlan, problem: CompiledProblem, problem_view, count: int) -> RunOutcome:
    """Run one plan, then score its snapshots (projection time is not part of the run)."""
    before, cpu = load_average(), time.process_time()
    trajectory = run_algorithm(problem, plan.options)
    cpu, after = time.process_time() - cpu, load_average()
    series = snapshot_series(trajectory, problem_view)
    stats = dict(trajectory.stats, cpu_s=cpu)
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


# --------------------------------------------------------------------------- metrics


def crossing(points: list[dict], target: float, key: str) -> dict | None:
    """Where the projected objective first reaches ``target``, in ``key`` units.

    Returns
    -------
    dict or None
        ``first_snapshot`` (value of ``key`` at the first projected snapshot at or below the
        target) and ``interpolated`` (log-linear in ``key`` between that snapshot and the one
        before it); None if never reached.
    """
    for k, point in enumerate(points):
        if point["projected_objective"] > target:
            continue
        at = float(point[key])
        if k == 0:
            return {"first_snapshot": at, "interpolated": at}
        before = points[k - 1]
        x0, x1 = max(float(before[key]), 1e-12), max(at, 1e-12)
        f0, f1 = before["projected_objective"], point["projected_objective"]
        share = (f0 - target) / (f0 - f1) if f0 > f1 else 1.0
        return {"first_snapshot": at,
                "interpolated": math.exp(math.log(x0) + share * (math.log(x1) - math.log(x0)))}
    return None


def tolerance_key(tolerance: float) -> str:
    """JSON key of a tolerance, e.g. ``"1%"``, ``"0.1%"``."""
    return f"{tolerance:.1%}" if tolerance < 0.01 else f"{tolerance:.0%}"


def crossings(points: list[dict], best: float) -> dict:
    """Seconds, checks and iterations to within each of ``TOLERANCES`` of ``best``."""
    return {tolerance_key(tol): {key: crossing(points, best + tol * abs(best), key)
                                 for key in ("seconds", "checks", "iterations")}
            for tol in TOLERANCES}


def run_metrics(outcome: RunOutcome, best: float) -> dict:
    """Throughput, checks, final state and the time/checks/iterations to each target."""
    stats, series = outcome.stats, outcome.series
    iterations = max(int(stats["iterations"]), 1)
    final = outcome.projected[-1] if outcome.projected else {}
    return {
        "iterations": int(stats["iterations"]),
        "solve_s": stats["solve_s"],
        "iterations_per_s": stats["iterations"] / stats["solve_s"],
        "iterations_per_s_second_half": second_half_rate(series),
        "cpu_s": stats["cpu_s"],
        "cpu_share": stats["cpu_s"] / stats["solve_s"],
        "iterations_per_cpu_s": stats["iterations"] / max(stats["cpu_s"], 1e-9),
        "constraint_checks": int(stats["constraint_checks"]),
        "checks_per_iteration": stats["constraint_checks"] / iterations,
        "stopped_by_time_limit": bool(stats.get("stopped_by_time_limit", False)),
        "final_average_violation": series["violation"][-1] if series["violation"] else None,
        "final_iterate_violation": series["iterate_violation"][-1]
        if series["iterate_violation"] else None,
        "final_average_objective": final.get("objective"),
        "final_projected_objective": final.get("projected_objective"),
        "best_projected_objective": min((p["projected_objective"] for p in outcome.projected),
                                        default=None),
        "to_target": crossings(outcome.projected, best),
    }


def second_half_rate(series: dict) -> float | None:
    """Iterations per second over the second half of the run's snapshots (no start-up)."""
    its, secs = series["iterations"], series["seconds"]
    if len(its) < 4:
        return None
    half = len(its) // 2
    spent = secs[-1] - secs[half]
    return (its[-1] - its[half]) / spent if spent > 0 else None


def ratio(numerator: dict | None, denominator: dict | None, fallback: float | None) -> dict:
    """numerator / denominator of two :func:`crossing` results.

    When the numerator never reached the target, ``fallback`` (its total spent) over the
    denominator is a lower bound; None when the denominator never reached it.
    """
    if denominator is None:
        return {"value": None, "kind": "denominator never reached the target"}
    if numerator is None:
        if fallback is None:
            return {"value": None, "kind": "neither reached"}
        return {"value": fallback / denominator["interpolated"], "kind": "lower bound"}
    return {"value": numerator["interpolated"] / denominator["interpolated"],
            "kind": "interpolated",
            "first_snapshot_value": numerator["first_snapshot"] / denominator["first_snapshot"]}


def target_ratios(full: dict, light: dict, key: str) -> dict:
    """FullTouch/LightTouch checks and LightTouch/FullTouch seconds to the ``key`` target."""
    return {
        "checks_ratio_fulltouch_over_lighttouch": ratio(
            full["to_target"][key]["checks"], light["to_target"][key]["checks"],
            float(full["constraint_checks"])),
        "time_ratio_lighttouch_over_fulltouch": ratio(
            light["to_target"][key]["seconds"], full["to_target"][key]["seconds"],
            float(light["solve_s"])),
    }


def comparisons(metrics: dict[str, dict]) -> dict:
    """Issue 2's targets as ratios within this run, for every LightTouch variant.

    The headline is at ``TOLERANCE``; ``by_tolerance`` repeats the ratios at every entry of
    ``TOLERANCES`` (looser targets are crossed mid-run, not at the end of the budget).
    """
    full = metrics.get("fulltouch")
    out = {}
    for name, light in metrics.items():
        if not name.startswith("lighttouch") or full is None:
            continue
        headline = target_ratios(full, light, tolerance_key(TOLERANCE))
        checks = headline["checks_ratio_fulltouch_over_lighttouch"]["value"]
        times = headline["time_ratio_lighttouch_over_fulltouch"]["value"]
        out[name] = {
            "iterations_per_s": light["iterations_per_s"],
            "iterations_per_s_target": TARGET_ITERATIONS_PER_S,
            "iterations_per_s_met": light["iterations_per_s"] >= TARGET_ITERATIONS_PER_S,
            **headline,
            "checks_ratio_met": checks is not None and checks >= TARGET_CHECKS_RATIO,
            "time_no_worse_met": times is not None and times <= 1.0,
            "by_tolerance": {tolerance_key(tol): target_ratios(full, light, tolerance_key(tol))
                             for tol in TOLERANCES},
        }
    return out


# --------------------------------------------------------------------------- extras


def pipeline_run(spec: dict, spec_path: Path, settings: Settings) -> dict:
    """One ``worker.solve.solve`` of LightTouch (lazy): shrinking LP and projected mean."""
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
        stats = run_algorithm(problem, options).stats
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


# --------------------------------------------------------------------------- plots


def _styled(ax, xlabel: str, ylabel: str, log_x: bool = True) -> None:
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)


def _objective_panel(ax, outcomes: list[RunOutcome], key: str, target: float,
                     limits: tuple[float, float]) -> None:
    """f(Π_g(w̄)) of each run's projected snapshots against ``key``."""
    for outcome in outcomes:
        points = [p for p in outcome.projected if p[key] > 0]
        ax.plot([p[key] for p in points], [p["projected_objective"] for p in points],
                marker="o", markersize=3, label=outcome.plan.name)
    ax.axhline(target, color="grey", linestyle="--", linewidth=1, label="exact optimum + 1%")
    ax.set_ylim(*limits)


def objective_limits(outcomes: list[RunOutcome], best: float) -> tuple[float, float]:
    """y-range showing every run's approach to the best objective."""
    finals = [o.projected[-1]["projected_objective"] for o in outcomes if o.projected]
    top = max(best + 0.3 * abs(best), 1.05 * max(finals, default=best))
    return best - 0.02 * abs(best), top


def figure_objective(outcomes, target, limits, path: Path) -> None:
    """Figure 1: objective vs iterations and vs constraint checks."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    _objective_panel(axes[0], outcomes, "iterations", target, limits)
    _styled(axes[0], "iterations", "f(Π_g(w̄))  (mean pairwise hinge)")
    _objective_panel(axes[1], outcomes, "checks", target, limits)
    _styled(axes[1], "constraint checks", "f(Π_g(w̄))")
    axes[1].legend(fontsize=8)
    fig.suptitle("Objective of the projected running average (cf. paper Figure 1)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def figure_constraints(outcomes: list[RunOutcome], path: Path) -> None:
    """Figure 2: violation and mean checks per iteration vs iterations."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for k, outcome in enumerate(outcomes):
        color, series = f"C{k}", outcome.series
        its = np.asarray(series["iterations"], dtype=float)
        keep = its > 0
        iterate = np.array([np.nan if v is None else max(v, VIOLATION_FLOOR)
                            for v in series["iterate_violation"]])
        axes[0].plot(its[keep], iterate[keep], color=color, alpha=0.3, linewidth=0.7)
        long = keep & (np.asarray(series["window"]) >= its / 3)
        average = np.maximum(np.asarray(series["violation"], dtype=float), VIOLATION_FLOOR)
        axes[0].plot(its[long], average[long], color=color, marker=".", markersize=3,
                     label=f"{outcome.plan.name} w̄")
        per_iteration = np.asarray(series["checks"], dtype=float) / np.maximum(its, 1.0)
        axes[1].plot(its[keep], per_iteration[keep], color=color, label=outcome.plan.name)
    axes[0].set_yscale("log")
    _styled(axes[0], "iterations", "max(0, max_i g_i)   (dots: w̄, faint: w(t))")
    axes[1].set_yscale("log")
    _styled(axes[1], "iterations", "constraint checks per iteration so far")
    axes[0].legend(fontsize=7)
    fig.suptitle("Constraint handling (cf. paper Figure 2). w̄: suffix averages spanning >= 1/3 "
                 f"of the run; violations floored at {VIOLATION_FLOOR:g}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def figure_time(outcomes, target, limits, path: Path) -> None:
    """Figure 3: objective vs wall time."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    _objective_panel(ax, outcomes, "seconds", target, limits)
    _styled(ax, "wall time, s (single thread)", "f(Π_g(w̄))")
    ax.legend(fontsize=8)
    ax.set_title("Objective vs wall time (cf. paper Figure 3)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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


def write_outputs(report: dict, outcomes: list[RunOutcome], best: float, target: float,
                  prefix: str) -> None:
    """The JSON and the three figures under ``bench/results``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS / f"{prefix}.json"
    json_path.write_text(json.dumps(report, indent=1, default=_json_default) + "\n")
    limits = objective_limits(outcomes, best)
    figure_objective(outcomes, target, limits, RESULTS / f"{prefix}_fig1.png")
    figure_constraints(outcomes, RESULTS / f"{prefix}_fig2.png")
    figure_time(outcomes, target, limits, RESULTS / f"{prefix}_fig3.png")
    print(f"wrote {json_path} and {prefix}_fig{{1,2,3}}.png in {report['total_s']:.0f} s")


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | Path):
        return list(value) if isinstance(value, tuple) else str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


if __name__ == "__main__":
    sys.exit(main())
