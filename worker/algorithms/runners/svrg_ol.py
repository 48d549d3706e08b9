"""SVRG OL (Cutkosky & Busa-Fekete, Algorithm 1) with the LightTouch constraint term.

Round k of the schedule (:mod:`worker.algorithms.run.svrg_schedule`):

1. batch phase: grad F^(v_k) over N^_k examples (:mod:`worker.distributed.batch`, in this process
   or on Dask) — one communication round; when the examples stay in partitions the driver
   does not hold, the round also returns about T_k k_f of them, which the serial phase draws
   from;
2. serial phase: T_k steps of the online learner on variance-reduced gradients plus the
   sampled constraint subgradients from the learned p (:func:`~worker.kernels.svrg.serial_steps`),
   continuing the learner from round to round (the learner is never reset);
3. v_{k+1} = the average of the round's iterates (line 12).

Candidates for the shrinking LP are every round's average and last iterate, plus averages so
far and iterates at ``candidates / 2`` evenly spaced steps. ``gamma: auto`` re-estimates the
penalty (:mod:`worker.algorithms.run.penalty`) at the end of every round in the first half of the
run. ``minibatch`` sets (k_f, k_g, k_p), default (1, 2, 8): one example per step as in the
paper. ``eta_w`` is AdaGrad's step scale; FreeRex has none.

``iterations: "auto"`` plans the schedule for the default budget (200,000 serial steps) or
:data:`AUTO_PASSES` serial steps per example, whichever is more (:func:`planned_steps`), and
ends it early: on linear constraints when this process holds every row, after the first
round at which the rule of :mod:`worker.algorithms.run.stopping` fires at the new anchor (it
projects it and evaluates f over every row); otherwise at the first batch phase over every
row whose full gradient certifies the anchor, or at which the doubling-stage estimate
fires (:mod:`worker.algorithms.run.snapshot_rule`: no pass beyond the round's own).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from worker.algorithms.run.arrays import new_state, problem_arrays, run_config
from worker.algorithms.run.driver import Counters, snapshot_iterations
from worker.algorithms.run.groups import group_count, lazy_update
from worker.algorithms.run.loop import ChunkedLoop, Progress, ProgressCallback
from worker.algorithms.run.options import SolverOptions, start_point, step_scale
from worker.algorithms.run.penalty import multiplier_mass, penalized_objective, raised_gamma
from worker.algorithms.run.snapshot_rule import SnapshotRule
from worker.algorithms.run.stopping import CertifiedStages
from worker.algorithms.run.svrg_schedule import schedule
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import Trajectory
from worker.distributed.batch import BatchStats, PartitionedBatch, open_batch_phase
from worker.errors import SpecError
from worker.kernels.constraints import max_violation
from worker.kernels.distribution import init_distribution, rebase_distribution
from worker.kernels.iteration import restart_average, running_average
from worker.kernels.layout import CHECKS, ITERATION, MODE_LIGHT, MODE_PLAIN
from worker.kernels.objective import objective_value
from worker.kernels.online import LEARNER_CODES, new_slots
from worker.kernels.svrg import Rows, SerialRun, serial_steps
from worker.problem.compiled import QUADRATIC, CompiledProblem
from worker.stats import Stats, Value

#: (k_f, k_g, k_p) when ``minibatch`` is automatic.
DEFAULT_MINIBATCH = (1, 2, 8)

#: Serial steps whose examples the driver holds at once when it holds no rows: a longer
#: serial phase draws them in chunks, one communication round each.
SERIAL_CHUNK = 2**18

#: Serial steps per example that ``iterations: "auto"`` plans for at least: the LightTouch
#: paper's ranking lattice from raw pairs ended 0.9% from its certified bound after five
#: (docs/stopping-rules.md#svrg-ols-budget).
AUTO_PASSES = 5


def serial_sample_rows(options: SolverOptions, n: int) -> int:
    """Examples one serial phase (or chunk) draws at most when the driver holds none of the
    ``n``: k_f per step of the schedule's longest round, at most :data:`SERIAL_CHUNK`
    steps."""
    rounds = schedule(options.svrg, planned_steps(options, n))
    k_f = (options.minibatch or DEFAULT_MINIBATCH)[0]
    return k_f * min(SERIAL_CHUNK, max(r.serial_steps for r in rounds))


def planned_steps(options: SolverOptions, n: int) -> int:
    """The serial steps the schedule is planned for: ``solver.iterations``, or with
    ``iterations: "auto"`` the default budget or :data:`AUTO_PASSES` per each of the ``n``
    examples, whichever is more (the stopping rule may end it early)."""
    if not options.until_converged:
        return options.iterations
    return max(options.iterations, AUTO_PASSES * n)


@dataclass(frozen=True)
class SvrgProgress(Progress):
    """A progress report with the batch phases so far and the bytes they moved."""

    communication_rounds: int = 0
    bytes_moved: int = 0


@dataclass(frozen=True)
class SvrgStats(Stats):
    """SVRG OL's record (:mod:`worker.stats`): why it stopped (and the stopping rule's
    figures), its counters and penalty, the batch phases', and its schedule."""

    stopped_by: str
    rule: Mapping[str, Value]
    counters: Counters
    stopped_by_time_limit: bool
    gamma: float
    batch: BatchStats
    rounds_planned: int
    learner: str
    schedule: str
    groups: int


def _serial_phase(loop: ChunkedLoop, advance, stop: int, *, marks: set[int], end: int,
                  candidates: Candidates, state, average) -> bool:
    """Run serial steps to iteration ``stop`` (at most the round's ``end``), snapshotting
    the average and the iterate at every mark on the way and at ``end``; False if the
    deadline stopped it."""
    for mark in sorted({m for m in marks if loop.iteration < m < stop} | {stop}):
        finished = loop.run(advance, mark)
        if mark in marks or mark == end or not finished:
            checks = int(state.counters[CHECKS])
            candidates.add(average(), loop.iteration, "average", checks, loop.seconds)
            candidates.add(state.w, loop.iteration, "iterate", checks, loop.seconds)
        if not finished:
            return False
    return True


def _chunk(steps: int, sampled: bool) -> int:
    """The steps of a serial phase's next chunk, of ``steps`` left: at most
    :data:`SERIAL_CHUNK` when the driver holds no rows (``sampled``)."""
    return min(steps, SERIAL_CHUNK) if sampled else steps


def _serial_round(loop: ChunkedLoop, batch: PartitionedBatch, arrays, run: SerialRun,
                  state, first: Rows | None, index: int, k_f: int, steps: int,
                  snapshot) -> tuple[object, bool]:
    """The round's serial phase of ``steps`` steps, in chunks of at most
    :data:`SERIAL_CHUNK` when the driver holds no rows (each chunk's examples drawn then:
    ``first``'s came with the batch phase); the last chunk's arrays and False if the
    deadline stopped it. ``snapshot(advance, stop, end=...)`` runs the steps to ``stop``
    (:func:`_serial_phase`)."""
    finished, chunk, end = True, 0, loop.iteration + steps
    while finished and loop.iteration < end:
        stop = loop.iteration + _chunk(end - loop.iteration, batch.sampled)
        sample = first if chunk == 0 else batch.serial_sample(
            index, chunk, (stop - loop.iteration) * k_f)
        arrays = batch.serial_arrays(arrays, sample)
        finished = snapshot(lambda count, arrays=arrays: serial_steps(arrays, run, state,
                                                                      count), stop, end=end)
        chunk += 1
    return arrays, finished


def _config(arrays, problem: CompiledProblem, options: SolverOptions, groups: int, lazy: bool):
    k_f, k_g, k_p = options.minibatch or DEFAULT_MINIBATCH
    return run_config(arrays, mode=MODE_LIGHT if groups else MODE_PLAIN,
                      gamma=1.0 if options.gamma is None else options.gamma,
                      eta_w=step_scale(options), eta_p=options.eta_p,
                      strong_convexity=problem.objective.l2,
                      minibatch=(k_f, min(k_g, groups), min(k_p, groups)), lazy=lazy)


def _reporter(progress: ProgressCallback | None,
              batch: PartitionedBatch) -> ProgressCallback | None:
    if progress is None:
        return None

    def report(base: Progress) -> None:
        rounds, moved = batch.communication()
        progress(SvrgProgress(**dataclasses.asdict(base), communication_rounds=rounds,
                              bytes_moved=moved))
    return report


def _retuned(arrays, problem: CompiledProblem, cfg, state, average: np.ndarray):
    """cfg with gamma raised to the multiplier estimate at the round's average (Lemma 1)."""
    mass, _ = multiplier_mass(arrays, problem, average)
    state.counters[CHECKS] += problem.m
    gamma = raised_gamma(cfg.gamma, mass, float(max_violation(arrays, average)),
                         max(1.0, float(np.abs(average).max())))
    if gamma > cfg.gamma:
        rebase_distribution(cfg, state, int(state.counters[ITERATION]))
        cfg = cfg._replace(gamma=gamma)
    return cfg


def _averaged(state) -> np.ndarray:
    """The running average of the kernel state's iterates, shape (d,)."""
    out = np.empty_like(state.w)
    running_average(state, out)
    return out


def _start(problem: CompiledProblem, options: SolverOptions):
    """The constraint groups, run configuration and kernel state at w = clip(0)."""
    if problem.objective.kind == QUADRATIC:
        raise SpecError.at("solver.algorithm", "svrg_ol needs an empirical-risk objective "
                           "(examples to sample); choose lighttouch for a quadratic")
    lazy = lazy_update(problem.m, options.p_update)
    groups = group_count(problem.m, options.aggregate, lazy)
    arrays = problem_arrays(problem, groups)
    cfg = _config(arrays, problem, options, groups, lazy)
    state = new_state(arrays, start_point(problem, options), options.seed)
    if groups:
        init_distribution(arrays, cfg, state, state.w, 1)
    return arrays, cfg, state, groups


def run_svrg_ol(problem: CompiledProblem, options: SolverOptions,
                progress: ProgressCallback | None, deadline: float,
                source: PartitionedBatch | None = None) -> Trajectory:
    """Algorithm 1 with LightTouch constraints; candidates for the shrinking LP. ``source``:
    the examples' partitions already open (else the compiled problem's rows)."""
    svrg = options.svrg
    arrays, cfg, state, groups = _start(problem, options)
    code = LEARNER_CODES[svrg.learner]
    slots = new_slots(code, problem.d)
    sparse = problem.objective.l2 == 0 and problem.objective.l1 == 0
    average = partial(_averaged, state)

    def describe() -> tuple[float, float, int]:
        point = average()
        return (float(objective_value(arrays, point)), float(max_violation(arrays, point)),
                int(state.counters[CHECKS]))

    candidates = Candidates()
    anchor, stopped_by, every_row = state.w.copy(), None, arrays
    with open_batch_phase(problem, svrg, options.seed, source) as batch:
        total = planned_steps(options, batch.n)
        marks = set(snapshot_iterations(0, total, max(1, options.candidates // 2)))
        rounds = schedule(svrg, total)
        staged = problem.m > 0 and not batch.sampled
        rule = (CertifiedStages if staged else SnapshotRule)(arrays, problem, options.tolerance)
        loop = ChunkedLoop(deadline, total, describe, _reporter(progress, batch))
        snapshot = partial(_serial_phase, loop, marks=marks, candidates=candidates, state=state,
                           average=average)
        for index, planned in enumerate(rounds):
            if index and time.perf_counter() >= deadline:
                loop.timed_out = True
                break
            gradient = batch.gradient(anchor, index, planned.batch_size,
                                      _chunk(planned.serial_steps, batch.sampled) * cfg.k_f)
            if index and options.until_converged and not staged and (stopped_by := rule.stop(
                    anchor, gradient, cfg.gamma, loop.iteration)):
                break
            restart_average(state, state.w)
            run = SerialRun(cfg, code, step_scale(options), slots, sparse, anchor, gradient.mean,
                            batch.inverse_frequency, gradient.examples)
            arrays, finished = _serial_round(loop, batch, arrays, run, state, gradient.sample,
                                             index, cfg.k_f, planned.serial_steps, snapshot)
            anchor = average()
            if not finished:
                break
            if options.until_converged and staged and (stopped_by := rule.stop(
                    anchor, penalized_objective(every_row, anchor, cfg.gamma), loop.seconds,
                    candidates, loop.iteration, int(state.counters[CHECKS]))):
                break
            if options.gamma is None and groups and 2 * loop.iteration <= total:
                cfg = _retuned(arrays, problem, cfg, state, anchor)
        phases = batch.phase_stats()
    loop.report(force=True)
    stats = SvrgStats(stopped_by or ("time_limit" if loop.timed_out else "iterations"),
                      rule.stats() if options.until_converged else {},
                      Counters.of(loop.iteration, state.counters), loop.timed_out,
                      float(cfg.gamma), phases, len(rounds), svrg.learner, svrg.schedule,
                      groups)
    return Trajectory("svrg_ol", candidates, arrays, stats)
