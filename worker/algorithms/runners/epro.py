"""Epro-SGD: epoch-projection SGD for strongly convex problems (Chen et al., Algorithm 1).

Epochs k = 1, 2, ... of T_k = T_1 2^(k-1) steps at the constant step eta_k = eta_1 / 2^(k-1)
run SGD on f + lambda [max_i g_i]_+ (:mod:`worker.kernels.epro`); each epoch ends with one
exact projection of the epoch's average onto W ∩ {g <= 0}, which starts the next epoch.
Theorem 1 gives E f(x) - f(x*) <= 32 mu^2 G^2 / (beta (T + 8)), O(1/T), with
k = ceil(log2(T/T_1 + 1)) projections.

Defaults, from Theorem 1 where its constants are known:

* T_1 = 8 (Theorem 1).
* eta_k = eta_w / (beta T_1 2^(k-1)) with beta = ``objective.l2``: the step 1/(beta t) of the
  paper's own experiments (§5: "we set the step size eta_t = 1/(lambda t)" for Epro) at the
  start of each epoch, held constant within it. Theorem 1's eta_1 = mu / (2 beta) (mu > 1)
  is 4 mu = 8 times larger at the same t; on smooth problems it bounces between the box
  faces for most of the run and ends far further from f* (bench/epro_rate.py,
  docs/benchmarks.md).
* lambda: ``solver.gamma`` when given. ``gamma: "auto"`` (heuristic; G_1 and rho are unknown)
  starts at 1 and, after each epoch's projection x~, raises lambda to twice the optimal
  multiplier mass estimated at x~ (:func:`~worker.algorithms.run.penalty.multiplier_mass`), or
  doubles it when the epoch average was still infeasible with a saturated estimate, exactly as
  LightTouch's automatic gamma (Lemma 1's exact-penalty threshold is ||lambda*||_1 for
  unit-norm rows; Lemma 2 needs lambda above G_1 / rho, which bounds it).

``iterations: "auto"``: epochs double without end, and after each one the rule of
:mod:`worker.algorithms.run.stopping` looks at its projection x~_k (a feasible point: the
certificate's upper end; l2 > 0 makes the dual bound finite even on an unbounded box).

A fixed iteration budget is used exactly: the epochs that fit are floor(log2(T/T_1 + 1)) and the
last one absorbs the remainder, so there are at most ceil(log2(T/T_1 + 1)) projections. The
start point is the clip of 0 to W, not projected (Lemma 2 only needs ||x_1 - x*||).
Candidates are every epoch's average x^_k and its projection x~_k.

:func:`run_epochs` is the epoch loop shared with Epro-ORDA (:mod:`.epro_orda`, Algorithm 3),
which differs only in the inner loop, T_1 and the step decay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.driver import Counters
from worker.algorithms.run.loop import ChunkedLoop, ProgressCallback
from worker.algorithms.run.options import SolverOptions, start_point, step_scale
from worker.algorithms.run.penalty import multiplier_mass, penalized_objective, raised_gamma
from worker.algorithms.run.stopping import CertifiedStages
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import Trajectory
from worker.errors import SpecError
from worker.kernels.constraints import max_violation
from worker.kernels.epro import epro_sgd_steps
from worker.kernels.layout import CHECKS, ITERATION, N_COUNTERS, ProblemArrays
from worker.kernels.objective import objective_value
from worker.kernels.random import seed_state
from worker.problem.compiled import CompiledProblem
from worker.projection import project
from worker.stats import Stats, Value

#: T_1 of Theorem 1.
FIRST_EPOCH = 8
#: Examples per stochastic gradient of f when ``minibatch`` is automatic.
DEFAULT_K_F = 2


@dataclass(frozen=True)
class EproStats(Stats):
    """The record (:mod:`worker.stats`) of EPRO and EPRO-ORDA: why they stopped (and the
    stopping rule's figures), the counters, whether the time limit stopped them, the
    penalty, the epochs (one projection each), the projections' seconds and the zero
    coordinates of the last point."""

    stopped_by: str
    rule: Mapping[str, Value]
    counters: Counters
    stopped_by_time_limit: bool
    gamma: float
    epochs: int
    projections: int
    projection_s_total: float
    zeros: int


def epoch_lengths(iterations: int, first: int = FIRST_EPOCH) -> list[int]:
    """T_k = first * 2^(k-1) while the total fits in ``iterations``; the last takes the rest.

    Returns floor(log2(iterations/first + 1)) lengths (at least one) summing to ``iterations``.
    """
    lengths: list[int] = []
    length = first
    while sum(lengths) + length <= iterations:
        lengths.append(length)
        length *= 2
    if not lengths:
        return [iterations]
    lengths[-1] += iterations - sum(lengths)
    return lengths


@dataclass(frozen=True)
class Epoch:
    """What one epoch's inner loop runs on.

    Attributes
    ----------
    arrays : ProblemArrays
        One constraint group holding all m constraints.
    w : ndarray, shape (d,)
        x_1^k on entry (the previous epoch's projection; the clip of 0 to W in the first);
        the inner loop keeps its current iterate here (progress reports evaluate it).
    eta : float
        The epoch's step parameter eta_k.
    penalty : float
        lambda of Eq. (7) / (16).
    k_f : int
        Examples per stochastic gradient.
    rng : ndarray, uint64, shape (2,)
    counters : ndarray, int64, shape (N_COUNTERS,)
    loop : ChunkedLoop
        Advance it to ``stop``, the epoch's last iteration.
    stop : int
    """

    arrays: ProblemArrays
    w: np.ndarray
    eta: float
    penalty: float
    k_f: int
    rng: np.ndarray
    counters: np.ndarray
    loop: ChunkedLoop
    stop: int


#: Runs one epoch; returns (the point to project, finished before the deadline).
InnerLoop = Callable[[Epoch], tuple[np.ndarray, bool]]


def strong_convexity(problem: CompiledProblem, name: str) -> float:
    """beta = ``objective.l2`` > 0, or a SpecError: the Epro theorems need it."""
    beta = problem.objective.l2
    if beta <= 0:
        raise SpecError.at("solver.algorithm", f"{name} needs a strongly convex objective; "
                           "set objective.l2 > 0 or choose lighttouch")
    return beta


def run_epochs(problem: CompiledProblem, options: SolverOptions,
               progress: ProgressCallback | None, deadline: float, *, name: str, first: int,
               eta: float, decay: float, inner: InnerLoop) -> Trajectory:
    """Algorithms 1 and 3 of the Epro paper around an inner loop: epochs of
    ``epoch_lengths(T, first)`` iterations, each projected once at its end; the projection
    starts the next epoch, whose eta is the last one divided by ``decay``.

    Candidates are every epoch's output ("average") and its projection ("iterate"); with
    ``gamma: "auto"`` lambda is re-estimated after every projection (module docstring).
    """
    arrays = problem_arrays(problem, 1)
    penalty = 1.0 if options.gamma is None else options.gamma
    k_f = DEFAULT_K_F if options.minibatch is None else options.minibatch[0]
    w = start_point(problem, options)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    rng = seed_state(options.seed)
    loop = ChunkedLoop(deadline, options.iterations, progress=progress, describe=lambda: (
        float(objective_value(arrays, w)), float(max_violation(arrays, w)),
        int(counters[CHECKS])))
    candidates = Candidates()
    projections, projection_s = 0, 0.0
    rule = CertifiedStages(arrays, problem, options.tolerance)
    stopped_by = "iterations"
    for length in epochs(options, first):
        output, finished = inner(Epoch(arrays, w, eta, penalty, k_f, rng, counters, loop,
                                       loop.iteration + length))
        projection = project(output, problem.constraints, problem.lower, problem.upper)
        projections += 1
        projection_s += projection.seconds
        checks = int(counters[CHECKS])
        candidates.add(output, loop.iteration, "average", checks, loop.seconds)
        candidates.add(projection.solution, loop.iteration, "iterate", checks, loop.seconds)
        w[:] = projection.solution
        if options.gamma is None and problem.m:
            mass, _ = multiplier_mass(arrays, problem, w)
            counters[CHECKS] += problem.m
            penalty = raised_gamma(penalty, mass, float(max_violation(arrays, output)),
                                   max(1.0, float(np.abs(w).max())))
        eta /= decay
        if not finished:
            stopped_by = "time_limit"
            break
        if options.until_converged and (decision := rule.stop(
                w, penalized_objective(arrays, output, penalty), loop.seconds, candidates,
                loop.iteration, checks)):
            stopped_by = decision
            break
    loop.report(force=True)
    stats = EproStats(stopped_by, rule.stats() if options.until_converged else {},
                      Counters.of(loop.iteration, counters), loop.timed_out, float(penalty),
                      projections, projections, projection_s, int(np.count_nonzero(w == 0)))
    return Trajectory(name, candidates, arrays, stats)


def epochs(options: SolverOptions, first: int) -> Iterator[int]:
    """The epoch lengths: :func:`epoch_lengths` of a fixed budget, or with
    ``iterations: "auto"`` first, 2 first, 4 first, ... until the stopping rule ends them."""
    if not options.until_converged:
        yield from epoch_lengths(options.iterations, first)
        return
    length = first
    while True:
        yield length
        length *= 2


def _sgd_epoch(epoch: Epoch) -> tuple[np.ndarray, bool]:
    """Algorithm 1, lines 4-8 before the projection: SGD steps, then the epoch's average."""
    total, direction = np.zeros_like(epoch.w), np.zeros_like(epoch.w)
    start = epoch.loop.iteration

    def advance(count: int) -> None:
        epro_sgd_steps(epoch.arrays, epoch.w, total, direction, epoch.eta, epoch.penalty,
                       epoch.k_f, epoch.rng, epoch.counters, count)

    finished = epoch.loop.run(advance, epoch.stop)
    return total / max(epoch.loop.iteration - start, 1), finished


def run_epro_sgd(problem: CompiledProblem, options: SolverOptions,
                 progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """Algorithm 1 of the Epro paper; candidates are the epoch averages and projections."""
    beta = strong_convexity(problem, "epro_sgd")
    return run_epochs(problem, options, progress, deadline, name="epro_sgd",
                      first=FIRST_EPOCH, eta=step_scale(options) / (beta * FIRST_EPOCH), decay=2.0,
                      inner=_sgd_epoch)
