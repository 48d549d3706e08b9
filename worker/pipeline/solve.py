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

from worker.algorithms.method_choice import GAMES, Choice
from worker.algorithms.registry import run_choice
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.options import SolverOptions
from worker.candidates.scores import ObjectiveValues
from worker.candidates.trajectory import Trajectory
from worker.distributed.band_rows import PartitionedRows
from worker.distributed.batch import PartitionedBatch
from worker.distributed.pairs import PairPlan
from worker.model_types.record import Lowering
from worker.pipeline.network import solve_network
from worker.pipeline.options import solver_options
from worker.pipeline.polishing import algorithm_options, polished_candidates, polishes
from worker.pipeline.prologue import CompiledJob, compiled_job, lowered_job
from worker.pipeline.report_parts import PartitionedTraining
from worker.pipeline.reporting import Reported, report_result
from worker.pipeline.scoring import LinearScoring
from worker.pipeline.summary import SummaryStats
from worker.pipeline.summary import summarize as summarize_scored
from worker.pipeline.sweep import solve_sweep
from worker.pipeline.warm import warm_options, warm_result, with_warm_candidates
from worker.problem.compile import DataSource
from worker.problem.compiled import CompiledProblem
from worker.result import Result
from worker.settings import JobSettings, call_settings
from worker.spec.models import Spec, parse_spec
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
    """Partitioned data's record: the partitions, and the objective values' and the
    report's map-reduces after the run (rounds and bytes, summed with the batch phases')."""

    partitions: int
    communication_rounds: int = stat(summed=True)
    bytes_moved: int = stat(summed=True)


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
            variant, progress, earlier=neighbour, settings=settings), earlier,
            settings.time_limit(model.solver.time_limit_s))
    earlier = warm_result(model, earlier)
    lowered = lowered_job(model, settings)
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
    """Compile the problem as its kind needs (:func:`worker.pipeline.prologue.compiled_job`),
    solve it with the method chosen there and report on it."""
    options = solver_options(model.solver, settings.cluster,
                             settings.time_limit(model.solver.time_limit_s))
    with compiled_job(model, source, settings) as job:
        problem = job.problem
        if model.network:
            load_s = time.perf_counter() - started
            result, records = solve_network(
                model, problem, job.choice,
                warm_options(options, earlier, problem.network.parameters), progress)
            solved = Solved(result, (*records, LoadTime(load_s)))
        else:
            rows = None if job.batch is None else PartitionedRows(job.batch)
            solved = _solved(model, problem, job.choice,
                             warm_options(options, earlier, problem.d), progress, started,
                             job.batch, rows)
        solved = replace(solved, records=(*solved.records, job.placement_stats),
                         reported=report_result(model, problem, source, solved.result,
                                                _training_partitions(job, settings)))
        if job.batch is not None:     # after the report: its map-reduce counts as a value's
            return replace(solved, records=(*solved.records, _partition_stats(job)),
                           partition_bytes=job.plan.size)
    return solved


def _training_partitions(job: CompiledJob, settings: JobSettings) -> PartitionedTraining | None:
    """The pointwise examples left in partitions, for the report (None: in memory, or
    pairs, which the report does not cover)."""
    if job.batch is None or isinstance(job.plan, PairPlan):
        return None
    return PartitionedTraining(job.batch, job.plan, settings.data)


def _partition_stats(job: CompiledJob) -> PartitionStats:
    """Partitioned data's record: the objective values' and the report's map-reduces, and
    for pairs and the games also the rounds' (the LightTouch family and the games keep no
    record of their own communication)."""
    batch, plan = job.batch, job.plan
    partitions = len(plan.ranges if isinstance(plan, PairPlan) else plan.pieces)
    if isinstance(plan, PairPlan) or job.choice.name in GAMES:
        rounds, moved = batch.communication()
        return PartitionStats(partitions, batch.value_rounds + rounds, batch.value_bytes + moved)
    return PartitionStats(partitions, batch.value_rounds, batch.value_bytes)


def deployed_solution(result: Result) -> np.ndarray:
    """The single solution a Result recommends: the projected mean, else the mean."""
    point = result.projected if result.projected is not None else result.mean
    return np.array(point.solution)


def _solved(model: Spec, problem: CompiledProblem, choice: Choice, options: SolverOptions,
            progress: ProgressCallback | None, started: float,
            batch: PartitionedBatch | None = None, rows: PartitionedRows | None = None
            ) -> Solved:
    """Run the chosen algorithm on the compiled problem, polish, and summarize; with
    ``batch`` (the examples held in partitions) objective values are map-reduces over them,
    counted as communication rounds (by the batch), and so are the polish's and the lower
    bound's reads of ``rows`` (the examples' rows on partitions)."""
    load_s = time.perf_counter() - started
    polishing = not choice.certified and polishes(model.solver.polish, problem, rows)
    trajectory = run_choice(choice, problem,
                            algorithm_options(options) if polishing else options, progress,
                            batch)
    candidates, polished, dual_start = trajectory.candidates.finite(), None, None
    if polishing:
        candidates, polished, dual_start = polished_candidates(
            problem, candidates, trajectory.run.solve_s, started + options.time_limit_s,
            options.tolerance, progress, rows)
    trajectory = with_warm_candidates(replace(
        trajectory, candidates=candidates.last(options.candidates)),  # the most recent
        options)
    values = None if batch is None else \
        (lambda points: batch.values(points, trajectory.arrays))
    result, summary = summarize(
        problem, trajectory, model.output, certified=choice.certified, values=values,
        n=None if batch is None else batch.n, deadline=started + options.time_limit_s,
        tolerance=options.tolerance, rows=rows, dual_start=dual_start)
    return Solved(result, (trajectory.run, polished, summary, LoadTime(load_s)))


def summarize(problem: CompiledProblem, trajectory: Trajectory, output: Output, *,
              certified: bool = False, values: ObjectiveValues | None = None,
              n: int | None = None, deadline: float | None = None,
              tolerance: float = 1e-3, rows: PartitionedRows | None = None,
              dual_start: np.ndarray | None = None) -> tuple[Result, SummaryStats]:
    """:func:`worker.pipeline.summary.summarize` of a compiled problem
    (:class:`~worker.pipeline.scoring.LinearScoring`): what ``output`` asks for — the
    mixture, its mean, the mean's projection (not with rate constraints), the best single
    candidate and (hinge-loss LPs, unless the method is ``certified`` already) a lower bound
    on the optimum, whose LP may use what is left until ``deadline`` (its ascent from the
    polish's example weights ``dual_start``: :mod:`worker.pipeline.polishing`). ``values``
    and ``n``
    stand in for the problem's rows when it holds none (and ``rows`` for the bound's); the
    deterministic model is chosen within ``tolerance``."""
    scoring = LinearScoring(problem, trajectory.arrays, values, n,
                            output.lower_bound and not certified, deadline, rows=rows,
                            dual_start=dual_start)
    return summarize_scored(scoring, trajectory, output, tolerance)
