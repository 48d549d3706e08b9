"""The Lagrangian and proxy-Lagrangian games as algorithms (Cotter, Jiang, Sridharan 2019).

Both run :func:`~worker.kernels.games.game_steps` and keep theta(t) at ``candidates`` evenly
spaced iterations (the paper's §6 keeps every 50th of 5,000), with the algorithm's own
mixture theta-bar as ``Trajectory.baseline``: uniform for the Lagrangian (Theorem 2), weighted
by lambda_1(t) for the proxy-Lagrangian (Theorem 3). Shrinking (Lemma 3, §5) then picks the
best distribution over the same candidates on the *original* constraints, which is at least
as good as theta-bar there and has at most m+1 members; both are reported.

Defaults (heuristics where the paper leaves them to a grid search, §6):

* theta step: a number for ``solver.eta_w`` steps by eta_w / sqrt(t), as the paper's
  analysis; ``"auto"`` (the default) is scale-free. DoG steps (distance over gradients,
  :mod:`worker.algorithms.run.step_rule`) over a copy of the start, with the multipliers held
  at their start, for 1/16 of the iterations, measure how far theta goes, r; the game then
  starts from theta(1) with AdaGrad's norm step for a player whose set has diameter r / 2,
  eta_t = (r / 2) / sqrt(sum_{s <= t} |g_s|^2), which adapts to the directions the game
  produces (an online learner's step, as the theta-player is one; the paper's §6 uses
  AdaGrad for both players). A fixed default cannot suit data in different units (on Adult
  with its features rescaled, see docs/benchmarks.md). Holding the multipliers during the
  measurement matters: with them playing, the multiplicative lambda-player moved all weight
  onto the constraints while DoG's first steps were still tiny, and the ramp proxy's game
  never recovered. k_f = k_r = 100 examples per step (§6.2's minibatch) unless
  ``solver.minibatch`` gives k_f and k_g (k_g is the rate batch).
* ``solver.game.eta_lambda: "auto"``: :mod:`worker.algorithms.run.multiplier_step` (1.0 for
  the proxy-Lagrangian, 0.1 for the Lagrangian, lowered where the rate estimates are
  noisy).
* proxy floors as TFCO: entries of M (or lambda) at least 1e-3 / (m+1); M starts with
  weight 1 - 1e-3 m/(m+1) on the objective row (TFCO's ``initial_multiplier_radius``).
* Lagrangian radius R: ``solver.game.radius`` (default unbounded, the paper's §6 choice);
  lambda starts at 0.
* a warm start from a game's Result (its ``resume``, :mod:`worker.algorithms.run.game_start`)
  resumes the lambda-player's state (Algorithm 2's M, or lambda) and the theta-player's
  AdaGrad diameter and sum instead of TFCO's start and the DoG measurement, which from a
  start near a stationary point measured a tiny r and left the game crawling; its doubling
  stages start at RESUMED_FIRST_STAGE.
* ``iterations: "auto"`` stops as ``converged`` only when some mixture of the last stage's
  snapshots meets every constraint within ``solver.tolerance`` (:func:`play`), so the
  shrunk answer (Lemma 3), whose candidates they are, is feasible.
* ``solver.game.proxy``: the hinge bound (convex; the paper's §6.2) or the ramp (non-convex).
  The stochastic guarantee for Algorithm 2 assumes convex proxies, to bound the theta-player's
  regret; with the ramp that player is SGD on a non-convex function (the setting of the
  paper's oracle analysis, §3-4, and of its neural network in §6.1). The lambda-player
  still sees the true rates, and shrinking scores the candidates on them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.driver import Counters, snapshot_iterations
from worker.algorithms.run.game_rounds import GameData, rate_arrays
from worker.algorithms.run.game_start import (
    MINIMUM_RADIUS,
    game_end,
    initial_state,
    resumed_game,
)
from worker.algorithms.run.loop import ChunkedLoop, ProgressCallback
from worker.algorithms.run.multiplier_step import auto_eta_lambda, rate_noise
from worker.algorithms.run.options import SolverOptions, start_point, step_scale
from worker.algorithms.run.step_rule import (
    copied,
    probe_steps,
    warmup_end,
    warmup_measurements,
)
from worker.algorithms.run.stopping import SnapshotBound, StageEstimate
from worker.candidates.shrink import best_mixture, least_violation
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import Trajectory
from worker.distributed.batch import PartitionedBatch
from worker.kernels.constraints import max_violation
from worker.kernels.games import (
    LAGRANGIAN,
    PROXY_EXTERNAL,
    PROXY_SWAP,
    SURROGATE_HINGE,
    SURROGATE_RAMP,
    GameConfig,
    GameState,
    RateArrays,
)
from worker.kernels.layout import (
    CHECKS,
    STEP_ADAGRAD_NORM,
    STEP_DOG,
    STEP_SCHEDULE,
)
from worker.kernels.objective import loss_spread, objective_value
from worker.problem.compiled import CompiledProblem
from worker.stats import Stats, Value

#: Examples per step for f and for the rate estimates (Cotter et al. §6.2).
DEFAULT_BATCH = 100
#: The theta-player's diameter after its DoG warm-up, as a share of the distance r it went.
THETA_DIAMETER_FRACTION = 0.5
#: ``solver.game.proxy`` -> the kernel's surrogate code.
SURROGATES = {"hinge": SURROGATE_HINGE, "ramp": SURROGATE_RAMP}


@dataclass(frozen=True)
class GameStats(Stats):
    """A game's record (:mod:`worker.stats`), from :func:`play`: how it ended
    (``stopped_by``; with stages, their count, tolerance and estimate), its counters,
    whether the time limit stopped it, its multipliers' step, lambda_0 at the end and (the
    Lagrangian) the multipliers' mass."""

    ended: Mapping[str, Value]
    counters: Counters
    stopped_by_time_limit: bool
    eta_lambda: float
    final_objective_weight: float
    multiplier_mass: float | None


@dataclass(frozen=True)
class LinearGameStats(Stats):
    """The linear games' record: the game's, the step rule's warm-up, (the Lagrangian) the
    relaxed violation of its own mixture, and on partitions what the rounds of sampled rows
    cost (:mod:`worker.algorithms.run.game_rounds`)."""

    game: GameStats
    steps: Mapping[str, Value]
    baseline_relaxed_max_violation: float | None
    rounds: Mapping[str, Value] | None = None


def game_config(options: SolverOptions, formulation: int, m: int,
                rates: RateArrays | None = None) -> GameConfig:
    """The kernels' settings of a game with m constraints (module docstring's defaults);
    ``rates`` (the kernel view of the rate constraints) sets ``eta_lambda: "auto"``."""
    k_f, k_r = (DEFAULT_BATCH, DEFAULT_BATCH) if options.minibatch is None else \
        options.minibatch[:2]
    game = options.game
    eta_lambda = game.eta_lambda or auto_eta_lambda(formulation, rate_noise(rates, int(k_r)))
    return GameConfig(formulation=formulation, eta_w=step_scale(options),
                      eta_lambda=float(eta_lambda),
                      radius=float(game.radius), log_floor=math.log(MINIMUM_RADIUS / (m + 1)),
                      k_f=int(k_f), k_r=int(k_r), surrogate=SURROGATES[game.proxy],
                      step_rule=STEP_DOG if options.eta_w is None else STEP_SCHEDULE)


def formulation_of(algorithm: str, options: SolverOptions) -> int:
    """The kernels' code of ``lagrangian`` or ``proxy_lagrangian`` (with its regret type)."""
    if algorithm == "lagrangian":
        return LAGRANGIAN
    return PROXY_SWAP if options.game.regret == "swap" else PROXY_EXTERNAL


def run_lagrangian(problem: CompiledProblem, options: SolverOptions,
                   progress: ProgressCallback | None, deadline: float,
                   source: PartitionedBatch | None = None) -> Trajectory:
    """Definition 1 on the relaxed problem (hinge or ramp); theta-bar uniform (Theorem 2).
    ``source``: the examples left in partitions (:mod:`worker.algorithms.run.game_rounds`)."""
    return _run_game(problem, options, progress, deadline, LAGRANGIAN, source)


def run_proxy_lagrangian(problem: CompiledProblem, options: SolverOptions,
                         progress: ProgressCallback | None, deadline: float,
                         source: PartitionedBatch | None = None) -> Trajectory:
    """Definition 2, Algorithm 2 (or external regret); theta-bar weighted by lambda_1.
    ``source`` as :func:`run_lagrangian`."""
    return _run_game(problem, options, progress, deadline,
                     formulation_of("proxy_lagrangian", options), source)


def _run_game(problem, options, progress, deadline, formulation, source) -> Trajectory:
    data = GameData.opened(problem_arrays(problem, problem.m), problem.rates,
                           lambda rates: rate_arrays(rates, problem.d,
                                                     relaxed=formulation == LAGRANGIAN),
                           source, problem.true_rate)
    cfg = game_config(options, formulation, problem.m_total, data.rate_arrays)
    state = initial_state(start_point(problem, options), problem.m_total, formulation,
                          options.seed)
    resumed = resumed_game(options.resume, formulation, state)

    def describe() -> tuple[float, float, int]:
        violation = max(float(max_violation(data.arrays, state.w)),
                        float(data.rate_values(state.w).max(initial=0.0)))
        objective = objective_value(data.arrays, state.w) if problem.true_rate is None \
            else data.rate_objective(state.w)  # progress shows the rate, not its proxy
        return float(objective), violation, int(state.counters[CHECKS])

    step_stats = {}
    if cfg.step_rule == STEP_DOG and resumed and options.resume.theta_diameter is not None:
        diameter = options.resume.theta_diameter
        cfg = cfg._replace(step_rule=STEP_ADAGRAD_NORM, eta_w=diameter)
        step_stats = {"eta_w_warmup": "resumed", "theta_diameter": diameter}
    elif cfg.step_rule == STEP_DOG:
        probe = PROBE_ITERATIONS if options.until_converged else \
            warmup_end(0, options.iterations)
        cfg, step_stats = measured_theta_step(data.steps, cfg, state, probe, deadline)
    loop = ChunkedLoop(deadline, options.iterations, describe, progress)
    candidates, baseline, game = play(
        loop, lambda count: data.steps(cfg, state, count), state.w, state.lam,
        state.counters, options, cfg, lambda solutions, weights: mixture_value(
            problem, data, solutions, weights),
        first_stage=RESUMED_FIRST_STAGE if resumed else FIRST_STAGE)
    relaxed = relaxed_violation(problem, np.array(candidates.solutions), baseline,
                                options.game.proxy) if formulation == LAGRANGIAN else None
    name = "lagrangian" if formulation == LAGRANGIAN else "proxy_lagrangian"
    stats = LinearGameStats(game, step_stats, relaxed, data.rounds())
    return Trajectory(name, candidates, data.arrays, stats, baseline,
                      game_end=game_end(state, cfg, formulation))


def measured_theta_step(steps: Callable[[GameConfig, GameState, int], None], cfg: GameConfig,
                        state: GameState, iterations: int, deadline: float
                        ) -> tuple[GameConfig, dict]:
    """``eta_w: "auto"`` (module docstring): up to ``iterations`` DoG steps (``steps(cfg,
    state, count)``) on a copy of ``state`` with the multipliers held at their start (all but
    the first few within 1/WARMUP_PART of the time left until ``deadline``:
    :func:`~worker.algorithms.run.step_rule.probe_steps`), measure r; return ``cfg`` on
    AdaGrad's norm step with diameter THETA_DIAMETER_FRACTION r, and the measurements for
    ``stats``."""
    probe = copied(state)
    held = cfg._replace(eta_lambda=0.0)
    taken = probe_steps(lambda count: steps(held, probe, count), iterations, deadline)
    stats = warmup_measurements(probe)
    diameter = THETA_DIAMETER_FRACTION * stats["warmup_radius"]
    stats |= {"eta_w_warmup": "dog", "warmup_iterations": taken,
              "theta_diameter": diameter}
    return cfg._replace(step_rule=STEP_ADAGRAD_NORM, eta_w=diameter), stats


#: ``iterations: "auto"``: the first stage's iterations (later stages double) and the DoG
#: probe's (``eta_w: "auto"``); the paper's §6.2 runs 5,000 iterations.
FIRST_STAGE = 1024
PROBE_ITERATIONS = 512
#: A resumed game's first stage (its multipliers and steps are those the earlier run ended
#: with, so the stages only confirm that the answer holds still).
RESUMED_FIRST_STAGE = FIRST_STAGE // 8
#: The games' objectives are mean losses (1 at theta = 0 for the hinge, log K for K classes),
#: so their estimate is relative above this and absolute below: on separable data the loss
#: falls towards an infimum of 0 that no finite theta reaches, and a relative rule would run
#: to the time limit.
LOSS_SCALE = 1.0

#: How a stretch of :func:`play` ended: it reached its last iteration, a snapshot passed
#: the bound's test, or the deadline passed.
FINISHED, BOUNDED, TIMED_OUT = "finished", "bounded", "timed_out"

#: (solutions (C, d), weights (C,)) -> (objective of the stage's mixture ``weights``, the
#: least largest expected violation of any mixture of ``solutions``, the relative
#: statistical floor of the tolerance).
MixtureValue = Callable[[np.ndarray, np.ndarray], tuple[float, float, float]]


def play(loop: ChunkedLoop, advance: Callable[[int], None], theta: np.ndarray,
         lam: np.ndarray, counters: np.ndarray, options: SolverOptions,
         cfg: GameConfig, value: MixtureValue | None = None, lower: float = -math.inf,
         first_stage: int = FIRST_STAGE) -> tuple[Candidates, np.ndarray, GameStats]:
    """Run a game to ``options.iterations`` (or the deadline), keeping theta (d,) at
    ``options.candidates`` evenly spaced iterations; with ``iterations: "auto"`` and a
    ``value``, doubling stages until the stage's mixture stops improving
    (:class:`~worker.algorithms.run.stopping.StageEstimate`) and some mixture of the
    stage's snapshots meets the constraints within ``options.tolerance`` (so the shrunk
    answer, which has those snapshots among its candidates, is feasible whenever the run
    reports ``converged``), keeping the last ``options.candidates`` snapshots; the first
    stage ends at ``first_stage``; ``lower`` bounds the objective from below (the estimate's
    gap is at most value - lower).

    Returns
    -------
    candidates : Candidates
    baseline : ndarray, shape (C,)
        theta-bar's weights: proportional to lambda[0] at each snapshot (constant 1 for the
        Lagrangian, so uniform, Theorem 2; lambda_1 of Theorem 3 for the proxy-Lagrangian).
    stats : GameStats
    """
    candidates, objective_weights = Candidates(), []

    def snapshots(start: int, stop: int, bound: SnapshotBound | None = None) -> str:
        """Play to ``stop``, keeping snapshots: how it ended (FINISHED; BOUNDED: ``bound``
        held at a snapshot; TIMED_OUT: the deadline passed)."""
        for iteration in snapshot_iterations(start, stop, options.candidates):
            finished = loop.run(advance, iteration)
            candidates.add(theta, loop.iteration, "iterate", int(counters[CHECKS]),
                           loop.seconds)
            objective_weights.append(float(lam[0]))
            if not finished:
                return TIMED_OUT
            if bound is not None and bound.holds(theta, loop.seconds):
                return BOUNDED
        return FINISHED

    if options.until_converged and value is not None:
        ended = _stages(loop, snapshots, candidates, objective_weights, options, value,
                        lower, first_stage)
    else:
        ended = {"stopped_by": "iterations" if snapshots(0, options.iterations) == FINISHED
                 else "time_limit"}
    candidates = candidates.last(options.candidates)
    loop.report(force=True)
    stats = GameStats(ended, Counters.of(loop.iteration, counters), loop.timed_out,
                      cfg.eta_lambda, float(lam[0]),
                      float(lam[1:].sum()) if cfg.formulation == LAGRANGIAN else None)
    weights = np.array(objective_weights[-len(candidates.solutions):])
    return candidates, weights / weights.sum(), stats


def _stages(loop: ChunkedLoop, snapshots: Callable[[int, int, SnapshotBound | None], str],
            candidates: Candidates, weights: list[float], options: SolverOptions,
            value: MixtureValue, lower: float = -math.inf,
            first_stage: int = FIRST_STAGE) -> dict:
    """Doubling stages of :func:`play` from ``first_stage`` until the rule or the deadline
    stops them; with a finite ``lower``, the bound's test also runs at snapshots between a
    stage's ends (:class:`~worker.algorithms.run.stopping.SnapshotBound`)."""
    estimate = StageEstimate(options.tolerance, LOSS_SCALE, two_sided=True, lower=lower)
    bound = SnapshotBound(value, lower, options.tolerance, LOSS_SCALE, options.tolerance) \
        if math.isfinite(lower) else None
    stages, stop = 0, first_stage
    stopped_by = "time_limit"
    while True:
        first = len(candidates.solutions)
        loop.total_iterations = stop
        ended = snapshots(loop.iteration, stop, bound)
        stages += 1
        if ended == BOUNDED:
            stopped_by = "converged"
            break
        if ended == TIMED_OUT:
            break
        objective, violation, floor = value(np.array(candidates.solutions[first:]),
                                            np.array(weights[first:]) / sum(weights[first:]))
        estimate.tolerance = max(options.tolerance, floor)
        if estimate.converged(objective) and violation <= options.tolerance:
            stopped_by = "converged"
            break
        stop *= 2
    return {"stopped_by": stopped_by, "stages": stages,
            "stage_tolerance": estimate.tolerance} | estimate.stats() | \
        ({} if bound is None else {"bound_checks": bound.checks})


def mixture_value(problem: CompiledProblem, data: GameData, solutions: np.ndarray,
                  weights: np.ndarray) -> tuple[float, float, float]:
    """(the expected objective of the shrunk mixture of the ``solutions``, the least largest
    expected violation of any mixture of them, the statistical floor) for ``solutions``
    (C, d) with ``weights`` (C,), on every example, linear row and true rate.

    The objective is what the run would answer if it stopped here: the shrinking LP's
    mixture of these snapshots (:func:`~worker.candidates.shrink.best_mixture`, the lowest
    objective among the mixtures of least violation). The objective at the weighted mean of
    the snapshots, which this replaced, moves with the multipliers' oscillation: on UCI Adult
    with demographic parity over five race groups it changed by about 1% of itself between
    doubling stages through 1.1M iterations and the run never stopped, where the LP's value
    settled within the floor after 16,384 iterations at a lower training error
    (docs/stopping-rules.md#the-estimate-doubling-stages).

    With rate constraints the floor is the standard error of the mean loss at the weighted
    mean (relative to the objective): the rates the answer is judged on are measured on the
    same n examples, and improving the surrogate objective by less than its standard error
    does not move them; without rates it is 0. On partitions (``data.source``) the
    objectives (a rate objective's hinge proxy, the f its game plays, as in memory) and
    rates are map-reduces over every example, and the loss's spread is the current round's.
    """
    arrays, source = data.arrays, data.source
    if source is None:
        objectives = np.array([objective_value(arrays, w) for w in solutions])
    elif problem.true_rate is not None:
        objectives = problem.true_rate.proxy_values(solutions)
    else:
        objectives = source.values(solutions, arrays)
    values = problem.constraints.values(solutions)
    if problem.rates is not None:
        values = np.hstack([values, problem.rates.values(solutions)])
    objective = float(best_mixture(objectives, values) @ objectives)
    floor = 0.0
    if problem.rates is not None:
        n = problem.n if source is None else \
            source.n if problem.true_rate is None else problem.true_rate.counted
        floor = float(loss_spread(arrays, weights @ solutions)) / math.sqrt(max(n, 1)) \
            / max(abs(objective), 1e-12)
    return objective, least_violation(values), floor


def relaxed_violation(problem: CompiledProblem, solutions: np.ndarray,
                      weights: np.ndarray, proxy: str) -> float:
    """max(0, max_i E g~_i) of a mixture (weights (T,) over solutions (T, d)) on the
    Lagrangian's relaxed problem: linear rows as they are, rates relaxed by ``proxy``."""
    values = problem.constraints.values(solutions)
    if problem.rates is not None:
        values = np.hstack([values, problem.rates.relaxed_values(solutions, proxy)])
    return max(0.0, float((weights @ values).max(initial=0.0)))
