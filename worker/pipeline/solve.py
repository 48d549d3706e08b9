"""The in-process pipeline: spec → compiled problem → algorithm → shrinking → projection.

``solve(spec, progress=None) -> Result`` is what the CLI, the Python API and the queue worker
all call (the flow of docs/architecture.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from worker.algorithms.driver import Candidates
from worker.algorithms.game_options import GameOptions
from worker.algorithms.loop import ProgressCallback
from worker.algorithms.options import SolverOptions, Trajectory
from worker.algorithms.registry import run_algorithm
from worker.candidates.best_single import best_single
from worker.candidates.deterministic import best_feasible
from worker.candidates.lower_bound import lower_bound_stats
from worker.candidates.scores import ObjectiveValues, evaluate_point, score_candidates
from worker.candidates.shrink import best_mixture, expected_violation
from worker.distributed.batch import PartitionedBatch, open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_partitions
from worker.errors import SolverError
from worker.pipeline.memory import (
    check_memory,
    declared_parts,
    memory_parts,
    network_memory_parts,
)
from worker.pipeline.network import solve_network
from worker.pipeline.polishing import add_polished, algorithm_options, polishes
from worker.pipeline.reporting import add_report, data_source, refuse_split
from worker.pipeline.sweep import solve_sweep
from worker.pipeline.warm import add_warm_candidates, warm_options, warm_result
from worker.problem.compile import compile_problem
from worker.problem.compile_network import compile_network_problem
from worker.problem.compiled import CompiledProblem
from worker.projection import project
from worker.result import Expected, Member, Point, Projected, Result, Sizes
from worker.settings import DaskSettings, data_roots
from worker.spec.models import Solver, Spec, parse_spec

DIVERGED = ("the run diverged: its iterates or their objective values are not finite numbers "
            "(NaN or infinite); lower solver.eta_w or solver.gamma (or leave them \"auto\"), "
            "or give finite bounds")

#: The budget of ``iterations: "auto"`` for the algorithms without a stopping rule (Epro,
#: MidTouch, the games, SVRG OL).
DEFAULT_ITERATIONS = 200_000


def solver_options(solver: Solver, source: PartitionedBatch | None = None) -> SolverOptions:
    """The plain options the algorithms take, from the spec's ``solver`` block (and, for
    svrg_ol on partitioned data, the open batch phase holding it)."""
    minibatch = None if solver.minibatch == "auto" else (
        solver.minibatch.k_f, solver.minibatch.k_g, solver.minibatch.k_p)
    aggregate = None if solver.aggregate == "auto" else int(solver.aggregate)
    return SolverOptions(
        algorithm=solver.algorithm,
        iterations=DEFAULT_ITERATIONS if solver.iterations == "auto" else solver.iterations,
        until_converged=solver.iterations == "auto", tolerance=solver.tolerance,
        time_limit_s=solver.time_limit_s, seed=solver.seed,
        gamma=None if solver.gamma == "auto" else float(solver.gamma),
        eta_w=None if solver.eta_w == "auto" else float(solver.eta_w), eta_p=solver.eta_p,
        minibatch=minibatch, aggregate=aggregate,
        p_update=solver.p_update, candidates=solver.candidates,
        svrg=SvrgOptions.from_spec(solver.svrg, source), game=GameOptions.from_spec(solver.game))


def solve(spec: dict[str, Any] | Spec, progress: ProgressCallback | None = None, *,
          roots: Sequence[Path] | None = None, max_job_bytes: int | None = None,
          earlier: Result | None = None) -> Result:
    """Solve one problem in this process and return its :class:`~worker.result.Result`.

    Parameters
    ----------
    spec : dict or Spec
        A problem spec (README "Problem spec"); invalid specs raise
        :class:`~worker.errors.SpecError`.
    progress : callable, optional
        Called with a :class:`~worker.algorithms.driver.Progress` between chunks.
    roots : sequence of Path, optional
        Directories ``file://`` URIs may read; default ``LIGHTTOUCH_DATA_ROOTS`` or the cwd.
    max_job_bytes : int, optional
        Refuse (:class:`~worker.errors.SpecError`) a problem whose memory estimate exceeds
        it, from the spec before reading data and again once the data are compiled.
    earlier : Result, optional
        The earlier job's Result that ``solver.warm_start.job`` names (the queue looks it
        up); a ``solver.warm_start.result`` file is read here.
    """
    started = time.perf_counter()
    model = parse_spec(spec)
    if model.sweep is not None:
        return solve_sweep(model, lambda variant, neighbour: solve(
            variant, progress, roots=roots, max_job_bytes=max_job_bytes, earlier=neighbour),
            earlier)
    check_memory(declared_parts(model), max_job_bytes)
    earlier = warm_result(model, earlier)
    source = data_source(model, roots if roots is not None else data_roots())
    svrg = model.solver.svrg
    if model.network:  # networks, multiclass and robust objectives are never partitioned
        problem = compile_network_problem(model, source)
        check_memory(network_memory_parts(problem, model.solver.candidates), max_job_bytes)
        load_s = time.perf_counter() - started
        options = warm_options(solver_options(model.solver), earlier,
                               problem.network.parameters)
        result = solve_network(model, problem, options, progress)
        result.stats["load_s"] = load_s
        add_report(model, problem, source, result)
    elif (plan := plan_partitions(model, source.roots, svrg.partition_rows,
                                  DaskSettings().partition_bytes)) is None:
        problem = compile_problem(model, source)
        check_memory(memory_parts(problem, model.solver.candidates), max_job_bytes)
        result = _solved(model, problem,
                         warm_options(solver_options(model.solver), earlier, problem.d),
                         progress, started)
        add_report(model, problem, source, result)
    else:
        refuse_split(model)
        options = SvrgOptions.from_spec(svrg)
        with open_partitioned(plan, options, model.solver.seed) as batch:
            problem = compile_problem(model, source, width_elsewhere=batch.d)
            check_memory(memory_parts(problem, model.solver.candidates), max_job_bytes)
            result = _solved(model, problem,
                             warm_options(solver_options(model.solver, batch), earlier,
                                          problem.d), progress, started, batch)
        source.stats.bytes_read += plan.size
        result.stats["partitions"] = len(plan.pieces)
    result.stats.update(source.stats.as_stats())
    result.stats["wall_s"] = time.perf_counter() - started
    return result


def _solved(model: Spec, problem: CompiledProblem, options: SolverOptions,
            progress: ProgressCallback | None, started: float,
            batch: PartitionedBatch | None = None) -> Result:
    """Run the algorithm on the compiled problem and summarize; with ``batch`` (the
    examples held in partitions) objective values are map-reduces over them, counted as
    communication rounds."""
    load_s = time.perf_counter() - started
    polishing = polishes(model.solver.polish, problem, in_memory=batch is None)
    trajectory = run_algorithm(problem, algorithm_options(options) if polishing else options,
                               progress)
    trajectory.candidates.keep_finite()
    if polishing:
        add_polished(problem, trajectory, started + options.time_limit_s, options.tolerance,
                     progress)
    trajectory.candidates.keep_last(options.candidates)        # the most recent, for the LP
    add_warm_candidates(trajectory, options)
    values = None if batch is None else \
        (lambda points: batch.values(points, trajectory.arrays))
    result = summarize(problem, trajectory, model.output.mixture, model.output.project,
                       with_single=model.output.single,
                       with_lower_bound=model.output.lower_bound, values=values,
                       n=None if batch is None else batch.n,
                       deadline=started + options.time_limit_s, tolerance=options.tolerance)
    result.stats["load_s"] = load_s
    if batch is not None:
        result.stats["communication_rounds"] += batch.value_rounds
        result.stats["bytes_moved"] += batch.value_bytes
    return result


def summarize(problem: CompiledProblem, trajectory: Trajectory, with_solutions: bool,
              with_projection: bool, *, with_single: bool = False,
              with_lower_bound: bool = False, values: ObjectiveValues | None = None,
              n: int | None = None, deadline: float | None = None,
              tolerance: float = 1e-3) -> Result:
    """Shrink the candidates to a mixture, average it, project the mean (not with rate
    constraints: their feasible set is not convex); report the algorithm's own mixture
    (``trajectory.baseline``) as ``baseline_*`` stats, if asked the best single one, and
    (``with_lower_bound``, hinge-loss LPs) a lower bound on the optimum from the projected
    mean, whose LP may use what is left until ``deadline`` (a ``time.perf_counter()``
    value); the deterministic model by :func:`best_feasible` within ``tolerance``.
    ``values`` and ``n`` stand in for the problem's rows when it holds none."""
    arrays = trajectory.arrays
    candidates: Candidates = trajectory.candidates
    solutions = np.array(candidates.solutions)
    began = time.perf_counter()
    if not candidates.solutions:
        raise SolverError(DIVERGED)
    scores = score_candidates(arrays, problem, solutions, values)
    if not np.isfinite(scores.objectives).all():
        raise SolverError(DIVERGED)
    weights = best_mixture(scores.objectives, scores.violations)
    lp_s = time.perf_counter() - began
    chosen = np.flatnonzero(weights)
    def member(c: int, weight: float) -> Member:
        return Member(weight=weight, iteration=candidates.iterations[c],
                      kind=candidates.kinds[c], objective=float(scores.objectives[c]),
                      max_violation=float(scores.max_violations[c]),
                      solution=solutions[c].tolist() if with_solutions else None)

    members = [member(c, float(weights[c])) for c in chosen]
    expected_values = weights @ scores.violations if scores.columns.size else np.zeros(0)
    expected = Expected(objective=float(weights @ scores.objectives),
                        max_violation=max(0.0, float(expected_values.max(initial=0.0))))
    mean_solution = weights @ solutions
    mean_objective, mean_violation = evaluate_point(arrays, problem, mean_solution, values)
    mean = Point(solution=mean_solution.tolist(), objective=mean_objective,
                 max_violation=mean_violation)
    stats = dict(trajectory.stats, lp_s=lp_s, candidates=len(candidates.solutions),
                 violated_columns=int(scores.columns.size))
    if trajectory.baseline is not None:
        stats.update(baseline_objective=float(trajectory.baseline @ scores.objectives),
                     baseline_max_violation=expected_violation(trajectory.baseline,
                                                               scores.violations),
                     baseline_support=int(np.count_nonzero(trajectory.baseline)))
    projected = None
    if with_projection and problem.rates is None:
        projection = project(mean_solution, problem.constraints, problem.lower, problem.upper)
        objective, violation = evaluate_point(arrays, problem, projection.solution, values)
        projected = Projected(solution=projection.solution.tolist(), objective=objective,
                              max_violation=violation, method=projection.method,
                              status=projection.status)
        stats["projection_s"] = projection.seconds
        if with_lower_bound:
            spare = 0.0 if deadline is None else deadline - time.perf_counter()
            stats.update(lower_bound_stats(problem, projection.solution, objective,
                                           trajectory.stats.get("solve_s", 0.0), spare))
    single = member(best_single(scores.objectives, scores.violations), 1.0) \
        if with_single else None
    chosen_one = best_feasible(scores.objectives, scores.max_violations, tolerance)
    deterministic = member(chosen_one, 1.0).model_copy(
        update={"solution": solutions[chosen_one].tolist()})
    return Result(algorithm=trajectory.algorithm,
                  sizes=Sizes(d=problem.d, m=problem.m_total, n=problem.n if n is None else n),
                  mixture=members,
                  expected=expected, mean=mean, projected=projected, single=single,
                  deterministic=deterministic, stats=stats, notes=list(problem.notes))
