"""The in-process pipeline: spec → compiled problem → algorithm → shrinking → projection.

``solve(spec, progress=None) -> Result`` is what the CLI, the Python API and the queue worker
all call (the flow of docs/architecture.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from worker.algorithms.registry import ALGORITHMS, choose_algorithm, run_algorithm
from worker.algorithms.run.game_options import GameOptions
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.options import SolverOptions
from worker.candidates.scores import ObjectiveValues
from worker.candidates.trajectory import Trajectory
from worker.distributed.batch import PartitionedBatch, open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_partitions
from worker.model_types import MODEL_TYPES
from worker.model_types.record import Lowering
from worker.pipeline.memory import (
    check_memory,
    declared_parts,
    memory_parts,
    network_memory_parts,
)
from worker.pipeline.network import solve_network
from worker.pipeline.polishing import algorithm_options, polished_candidates, polishes
from worker.pipeline.reporting import Reported, data_source, refuse_split, report_result
from worker.pipeline.scoring import LinearScoring
from worker.pipeline.summary import SummaryStats
from worker.pipeline.summary import summarize as summarize_scored
from worker.pipeline.sweep import solve_sweep
from worker.pipeline.warm import warm_options, warm_result, with_warm_candidates
from worker.problem.compile import DataSource, compile_problem
from worker.problem.compile_network import compile_network_problem
from worker.problem.compiled import CompiledProblem
from worker.result import Result
from worker.settings import DaskSettings, JobSettings, call_settings
from worker.spec.models import Solver, Spec, parse_spec
from worker.spec.solver import Output
from worker.stats import Stats, merged, stat


@dataclass(frozen=True)
class Solved:
    """A job solved and reported on, before its Result is assembled (:func:`_assembled`):
    the Result the summary made, the records of the stages that ran (None: a stage that did
    not), in order, what the report stage adds, and the bytes the partitions read (counted
    with the data source's)."""

    result: Result
    records: tuple[Stats | None, ...]
    reported: Reported = Reported()
    partition_bytes: int = 0


@dataclass(frozen=True)
class LoadTime(Stats):
    """The compiling stage's record (:mod:`worker.stats`): seconds from the job's start
    until the problem was compiled."""

    load_s: float


@dataclass(frozen=True)
class JobStats(Stats):
    """The job's own record: its seconds from start to end."""

    wall_s: float


@dataclass(frozen=True)
class PartitionStats(Stats):
    """Partitioned data's record: the partitions, and the objective values' map-reduces
    after the run (rounds and bytes, summed with the batch phases')."""

    partitions: int
    communication_rounds: int = stat(summed=True)
    bytes_moved: int = stat(summed=True)


#: ``iterations: "auto"`` runs every algorithm until its stopping rule
#: (docs/stopping-rules.md); this only plans SVRG OL's schedule (which the rule may end
#: early) and sizes MidTouch's first phase.
DEFAULT_ITERATIONS = 200_000


def solver_options(solver: Solver, cluster: DaskSettings) -> SolverOptions:
    """The plain options the algorithms take, from the spec's ``solver`` block and the
    process's Dask settings."""
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
        svrg=SvrgOptions.from_spec(solver.svrg, cluster), game=GameOptions.from_spec(solver.game))


def solve(spec: dict[str, Any] | Spec, progress: ProgressCallback | None = None, *,
          roots: Sequence[Path] | None = None, max_job_bytes: int | None = None,
          earlier: Result | None = None, settings: JobSettings | None = None) -> Result:
    """Solve one problem in this process and return its :class:`~worker.result.Result`.

    Parameters
    ----------
    spec : dict or Spec
        A problem spec (docs/spec.md#problem-spec-v1); invalid specs raise
        :class:`~worker.errors.SpecError`.
    progress : callable, optional
        Called with a :class:`~worker.algorithms.run.loop.Progress` between chunks.
    roots : sequence of Path, optional
        Directories ``file://`` URIs may read; default ``LIGHTTOUCH_DATA_ROOTS`` or the cwd.
        Not with ``settings`` (their ``roots``).
    max_job_bytes : int, optional
        Refuse (:class:`~worker.errors.SpecError`) a problem whose memory estimate exceeds
        it, from the spec before reading data and again once the data are compiled; also
        the budget of each file read. Default ``LIGHTTOUCH_MAX_JOB_BYTES`` for the files and
        no check of the estimate. Not with ``settings`` (their ``memory_limit`` and
        ``data.max_job_bytes``).
    earlier : Result, optional
        The earlier job's Result that ``solver.warm_start.job`` names (the queue looks it
        up); a ``solver.warm_start.result`` file is read here.
    settings : JobSettings, optional
        The job's settings, resolved once at its edge
        (:func:`worker.settings.job_settings`: the CLI, the queue's task and the Python API
        do) and passed down. Without them this call is its own edge: it resolves them from
        ``roots``, ``max_job_bytes`` and the environment.
    """
    started = time.perf_counter()
    model = parse_spec(spec)
    settings = call_settings(settings, roots, max_job_bytes)
    if model.sweep is not None:
        return solve_sweep(model, lambda variant, neighbour: solve(
            variant, progress, earlier=neighbour, settings=settings), earlier)
    check_memory(declared_parts(model), settings.memory_limit)
    earlier = warm_result(model, earlier)
    source = data_source(model, settings.roots, settings.data)
    lowered = MODEL_TYPES[model.model.type].lower(model, source)   # the compilers' spec
    solved = _solved_by_kind(lowered.spec, lowered.source, settings, earlier, progress,
                             started)
    return _assembled(solved, lowered, started)


def _assembled(solved: Solved, lowered: Lowering, started: float) -> Result:
    """The job's Result, built once from what each stage returned: the summary's Result
    with the report stage's report and notes, the model type's description of the deployed
    solution, and every stage's stats merged in order (the data source's last, with what the
    partitions read, then the job's own)."""
    result, reported = solved.result, solved.reported
    update: dict[str, Any] = {"report": reported.report,
                              "notes": [*result.notes, *reported.notes]}
    described = lowered.describe(deployed_solution(result))
    if described is not None:
        update["model"] = described
    loaded = lowered.source.stats
    loaded = replace(loaded, bytes_read=loaded.bytes_read + solved.partition_bytes)
    update["stats"] = merged(*solved.records, reported.stats, loaded,
                             JobStats(time.perf_counter() - started))
    return result.model_copy(update=update)


def _solved_by_kind(model: Spec, source: DataSource, settings: JobSettings,
                    earlier: Result | None, progress: ProgressCallback | None,
                    started: float) -> Solved:
    """Compile the problem as its kind needs (a network; rows in memory; rows in partitions,
    for SVRG OL on files), check its memory estimate, solve it and report on it."""
    svrg, options = model.solver.svrg, solver_options(model.solver, settings.cluster)
    if model.network:  # networks, multiclass and robust objectives are never partitioned
        problem = compile_network_problem(model, source, MODEL_TYPES[model.model.type])
        check_memory(network_memory_parts(problem, model.solver.candidates),
                     settings.memory_limit)
        load_s = time.perf_counter() - started
        result, records = solve_network(
            model, problem, warm_options(options, earlier, problem.network.parameters),
            progress)
        solved = Solved(result, (*records, LoadTime(load_s)))
    elif (plan := plan_partitions(model, source.roots, svrg.partition_rows,
                                  settings.cluster.partition_bytes, settings.data)) is None:
        problem = compile_problem(model, source)
        check_memory(memory_parts(problem, model.solver.candidates), settings.memory_limit)
        solved = _solved(model, problem, warm_options(options, earlier, problem.d),
                         progress, started)
    else:
        refuse_split(model)
        with open_partitioned(plan, options.svrg, model.solver.seed, settings.data) as batch:
            problem = compile_problem(model, source, width_elsewhere=batch.d)
            check_memory(memory_parts(problem, model.solver.candidates), settings.memory_limit)
            solved = _solved(model, problem, warm_options(options, earlier, problem.d),
                             progress, started, batch)
            partitions = PartitionStats(len(plan.pieces), batch.value_rounds,
                                        batch.value_bytes)
        return replace(solved, records=(*solved.records, partitions),
                       partition_bytes=plan.size)
    return replace(solved, reported=report_result(model, problem, source, solved.result))


def deployed_solution(result: Result) -> np.ndarray:
    """The single solution a Result recommends: the projected mean, else the mean."""
    point = result.projected if result.projected is not None else result.mean
    return np.array(point.solution)


def _solved(model: Spec, problem: CompiledProblem, options: SolverOptions,
            progress: ProgressCallback | None, started: float,
            batch: PartitionedBatch | None = None) -> Solved:
    """Run the algorithm on the compiled problem, polish, and summarize; with ``batch`` (the
    examples held in partitions) objective values are map-reduces over them, counted as
    communication rounds (by the batch)."""
    load_s = time.perf_counter() - started
    certified = ALGORITHMS[choose_algorithm(problem, options.algorithm)].certified
    polishing = not certified and polishes(model.solver.polish, problem,
                                           in_memory=batch is None)
    trajectory = run_algorithm(problem, algorithm_options(options) if polishing else options,
                               progress, batch)
    candidates, polished = trajectory.candidates.finite(), None
    if polishing:
        candidates, polished = polished_candidates(
            problem, candidates, trajectory.run.solve_s, started + options.time_limit_s,
            options.tolerance, progress)
    trajectory = with_warm_candidates(replace(
        trajectory, candidates=candidates.last(options.candidates)),  # the most recent
        options)
    values = None if batch is None else \
        (lambda points: batch.values(points, trajectory.arrays))
    result, summary = summarize(
        problem, trajectory, model.output.mixture, model.output.project,
        with_single=model.output.single,
        with_lower_bound=model.output.lower_bound and not certified, values=values,
        n=None if batch is None else batch.n, deadline=started + options.time_limit_s,
        tolerance=options.tolerance)
    return Solved(result, (trajectory.run, polished, summary, LoadTime(load_s)))


def summarize(problem: CompiledProblem, trajectory: Trajectory, with_solutions: bool,
              with_projection: bool, *, with_single: bool = False,
              with_lower_bound: bool = False, values: ObjectiveValues | None = None,
              n: int | None = None, deadline: float | None = None,
              tolerance: float = 1e-3) -> tuple[Result, SummaryStats]:
    """:func:`worker.pipeline.summary.summarize` of a compiled problem
    (:class:`~worker.pipeline.scoring.LinearScoring`): the mixture, its mean, the mean's
    projection (not with rate constraints) and (``with_lower_bound``, hinge-loss LPs) a lower
    bound on the optimum from it, whose LP may use what is left until ``deadline``.
    ``values`` and ``n`` stand in for the problem's rows when it holds none; the
    deterministic model is chosen within ``tolerance``."""
    scoring = LinearScoring(problem, trajectory.arrays, values, n, with_lower_bound, deadline)
    return summarize_scored(scoring, trajectory, Output(
        mixture=with_solutions, project=with_projection, single=with_single,
        lower_bound=with_lower_bound), tolerance)
