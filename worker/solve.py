"""The in-process pipeline: spec → compiled problem → algorithm → shrinking → projection.

``solve(spec, progress=None) -> Result`` is what the CLI, the Python API and the queue worker
all call (DESIGN §2 data flow).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from worker.algorithms.driver import Candidates, ProgressCallback
from worker.algorithms.methods import SolverOptions, Trajectory, run_algorithm
from worker.compile import DataSource, compile_problem
from worker.data import data_roots_from_env
from worker.evaluate import evaluate_point, score_candidates
from worker.problem import CompiledProblem
from worker.projection import project
from worker.result import Expected, Member, Point, Projected, Result, Sizes
from worker.shrink import best_mixture
from worker.spec import Solver, Spec, parse_spec


def solver_options(solver: Solver) -> SolverOptions:
    """The plain options the algorithms take, from the spec's ``solver`` block."""
    minibatch = None if solver.minibatch == "auto" else (
        solver.minibatch.k_f, solver.minibatch.k_g, solver.minibatch.k_p)
    aggregate = None if solver.aggregate == "auto" else int(solver.aggregate)
    return SolverOptions(
        algorithm=solver.algorithm, iterations=solver.iterations,
        time_limit_s=solver.time_limit_s, seed=solver.seed,
        gamma=None if solver.gamma == "auto" else float(solver.gamma),
        eta_w=solver.eta_w, eta_p=solver.eta_p, minibatch=minibatch, aggregate=aggregate,
        p_update=solver.p_update, candidates=solver.candidates)


def solve(spec: dict[str, Any] | Spec, progress: ProgressCallback | None = None, *,
          roots: Sequence[Path] | None = None) -> Result:
    """Solve one problem in this process and return its :class:`~worker.result.Result`.

    Parameters
    ----------
    spec : dict or Spec
        A problem spec (DESIGN §3); invalid specs raise :class:`~worker.errors.SpecError`.
    progress : callable, optional
        Called with a :class:`~worker.algorithms.driver.Progress` between chunks.
    roots : sequence of Path, optional
        Directories ``file://`` URIs may read; default ``LIGHTTOUCH_DATA_ROOTS`` or the cwd.
    """
    started = time.perf_counter()
    model = parse_spec(spec)
    source = DataSource(roots if roots is not None else data_roots_from_env())
    problem = compile_problem(model, source)
    load_s = time.perf_counter() - started
    trajectory = run_algorithm(problem, solver_options(model.solver), progress)
    result = summarize(problem, trajectory, model.output.mixture, model.output.project)
    result.stats["load_s"] = load_s
    result.stats.update(source.stats.as_stats())
    result.stats["wall_s"] = time.perf_counter() - started
    return result


def summarize(problem: CompiledProblem, trajectory: Trajectory, with_solutions: bool,
              with_projection: bool) -> Result:
    """Shrink the candidates to a mixture, average it, project the mean."""
    arrays = trajectory.arrays
    candidates: Candidates = trajectory.candidates
    solutions = np.array(candidates.solutions)
    began = time.perf_counter()
    scores = score_candidates(arrays, problem, solutions)
    weights = best_mixture(scores.objectives, scores.violations)
    lp_s = time.perf_counter() - began
    chosen = np.flatnonzero(weights)
    members = [Member(weight=float(weights[c]), iteration=candidates.iterations[c],
                      kind=candidates.kinds[c], objective=float(scores.objectives[c]),
                      max_violation=float(scores.max_violations[c]),
                      solution=solutions[c].tolist() if with_solutions else None)
               for c in chosen]
    expected_values = weights @ scores.violations if scores.columns.size else np.zeros(0)
    expected = Expected(objective=float(weights @ scores.objectives),
                        max_violation=max(0.0, float(expected_values.max(initial=0.0))))
    mean_solution = weights @ solutions
    mean_objective, mean_violation = evaluate_point(arrays, problem, mean_solution)
    mean = Point(solution=mean_solution.tolist(), objective=mean_objective,
                 max_violation=mean_violation)
    stats = dict(trajectory.stats, lp_s=lp_s, candidates=len(candidates.solutions),
                 violated_columns=int(scores.columns.size))
    projected = None
    if with_projection:
        projection = project(mean_solution, problem.constraints, problem.lower, problem.upper)
        objective, violation = evaluate_point(arrays, problem, projection.solution)
        projected = Projected(solution=projection.solution.tolist(), objective=objective,
                              max_violation=violation, method=projection.method,
                              status=projection.status)
        stats["projection_s"] = projection.seconds
    return Result(algorithm=trajectory.algorithm,
                  sizes=Sizes(d=problem.d, m=problem.m, n=problem.n), mixture=members,
                  expected=expected, mean=mean, projected=projected, stats=stats,
                  notes=list(problem.notes))
