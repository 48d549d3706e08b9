"""The lattice benchmark's snapshots: the series of averages and iterates a run kept, which of
them to project exactly, and their projected objectives."""

from __future__ import annotations

import math

import numpy as np

from worker.candidates.scores import evaluate_point
from worker.candidates.trajectory import Trajectory
from worker.kernels.constraints import max_violation
from worker.problem.compiled import CompiledProblem
from worker.projection import project

#: A point counts as feasible (its projection is itself) at or below this violation.
FEASIBLE_TOL = 1e-12
#: Projected snapshots closer than this factor in iterations are redundant.
MIN_SPACING = 1.15


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
