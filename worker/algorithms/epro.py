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
  is 4 mu = 8 times larger at the same t; on smooth problems (bench/epro_rate.py) it
  bounces between the box faces for most of the run and ends ~200x further from f*.
* lambda: ``solver.gamma`` when given. ``gamma: "auto"`` (heuristic; G_1 and rho are unknown)
  starts at 1 and, after each epoch's projection x~, raises lambda to twice the optimal
  multiplier mass estimated at x~ (:func:`~worker.algorithms.penalty.multiplier_mass`), or
  doubles it when the epoch average was still infeasible with a saturated estimate, exactly as
  LightTouch's automatic gamma (Lemma 1's exact-penalty threshold is ||lambda*||_1 for
  unit-norm rows; Lemma 2 needs lambda above G_1 / rho, which bounds it).

The iteration budget is used exactly: the epochs that fit are floor(log2(T/T_1 + 1)) and the
last one absorbs the remainder, so there are at most ceil(log2(T/T_1 + 1)) projections. The
start point is the clip of 0 to W, not projected (Lemma 2 only needs ||x_1 - x*||).
Candidates are every epoch's average x^_k and its projection x~_k.
"""

from __future__ import annotations

import numpy as np

from worker.algorithms.arrays import problem_arrays
from worker.algorithms.driver import Candidates
from worker.algorithms.loop import ChunkedLoop, ProgressCallback
from worker.algorithms.methods import SolverOptions, Trajectory
from worker.algorithms.penalty import multiplier_mass, raised_gamma
from worker.errors import SpecError
from worker.kernels.constraints import max_violation
from worker.kernels.epro import epro_sgd_steps
from worker.kernels.layout import CHECKS, GRADIENT_SAMPLES, ITERATION, N_COUNTERS
from worker.kernels.objective import objective_value
from worker.kernels.random import seed_state
from worker.problem import CompiledProblem
from worker.projection import project

#: T_1 of Theorem 1.
FIRST_EPOCH = 8
#: Examples per stochastic gradient of f when ``minibatch`` is automatic.
DEFAULT_K_F = 2


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


def run_epro_sgd(problem: CompiledProblem, options: SolverOptions,
                 progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """Algorithm 1 of the Epro paper; candidates are the epoch averages and projections."""
    beta = problem.objective.l2
    if beta <= 0:
        raise SpecError.at("solver.algorithm", "epro_sgd needs a strongly convex objective; "
                           "set objective.l2 > 0 or choose lighttouch")
    arrays = problem_arrays(problem, 1)
    penalty = 1.0 if options.gamma is None else options.gamma
    k_f = DEFAULT_K_F if options.minibatch is None else options.minibatch[0]
    w = np.clip(np.zeros(problem.d), problem.lower, problem.upper)
    total, direction = np.zeros(problem.d), np.zeros(problem.d)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    rng = seed_state(options.seed)
    loop = ChunkedLoop(deadline, options.iterations, progress=progress, describe=lambda: (
        float(objective_value(arrays, w)), float(max_violation(arrays, w)),
        int(counters[CHECKS])))
    candidates = Candidates()
    projections, projection_s, finished = 0, 0.0, True
    eta = options.eta_w / (beta * FIRST_EPOCH)
    for length in epoch_lengths(options.iterations):
        total[:] = 0.0
        start = loop.iteration

        def advance(count: int, eta=eta, penalty=penalty) -> None:
            epro_sgd_steps(arrays, w, total, direction, eta, penalty, k_f, rng, counters, count)

        finished = loop.run(advance, start + length)
        average = total / max(loop.iteration - start, 1)
        projection = project(average, problem.constraints, problem.lower, problem.upper)
        projections += 1
        projection_s += projection.seconds
        checks = int(counters[CHECKS])
        candidates.add(average, loop.iteration, "average", checks, loop.seconds)
        candidates.add(projection.solution, loop.iteration, "iterate", checks, loop.seconds)
        w[:] = projection.solution
        if options.gamma is None and problem.m:
            mass, _ = multiplier_mass(arrays, problem, w)
            counters[CHECKS] += problem.m
            penalty = raised_gamma(penalty, mass, float(max_violation(arrays, average)),
                                   max(1.0, float(np.abs(w).max())))
        eta /= 2.0
        if not finished:
            break
    loop.report(force=True)
    stats = {"iterations": loop.iteration, "constraint_checks": int(counters[CHECKS]),
             "gradient_samples": int(counters[GRADIENT_SAMPLES]),
             "stopped_by_time_limit": loop.timed_out, "gamma": float(penalty),
             "epochs": projections, "projections": projections,
             "projection_s_total": projection_s}
    return Trajectory("epro_sgd", candidates, arrays, stats)
