"""The Lagrangian and proxy-Lagrangian games on a :class:`~worker.problem.network.NetworkProblem`
(Cotter, Jiang, Sridharan 2019, §5's practical procedure; §6.1 for robust objectives).

The same games as :mod:`worker.algorithms.runners.games` (the same lambda-player, defaults,
candidates and theta-bar), with the theta-player stepping through the network
(:func:`~worker.kernels.network_game.network_game_steps`) by diagonal AdaGrad, as the paper's
§6 does for both players. A robust objective max_i L_i is played as Equation 3: minimize the
slack xi subject to L_i(theta) <= xi, with xi in [0, max_i L_i(theta(1))] (the start bounds
the optimum from above), starting at that upper end and stepping by AdaGrad with the step
its regret bound asks for, the interval's length over sqrt(2) (Duchi, Hazan & Singer 2011),
so that xi can cross its range within a few hundred steps whatever theta's step is.
Group-loss constraints L_G(theta) <= bound are played as those slack constraints are, against
their fixed bound (docs/rates.md#group-losses): a linear model under them is a one-layer
network here, as under a robust objective.

Defaults:

* ``eta_w: "auto"`` on a linear model (no hidden layer: robust, multiclass and linear rate
  problems) is measured as the linear games' theta step is: PROBE_ITERATIONS DoG steps with
  the multipliers held, then AdaGrad's per-coordinate step half the largest distance a
  coordinate went (the step its regret bound asks for on a box of that width, Duchi, Hazan &
  Singer 2011). A fixed step cannot suit every scale: 0.05 left a robust problem with
  features of scale 0.03 well above its min-max (measured:
  docs/stopping-rules.md#automatic-steps). With hidden layers it
  stays AdaGrad's :data:`AUTO_ETA`, so a coordinate moves by about eta_w / sqrt(t) after t
  steps of steady gradients whatever their scale (the paper's §6 grid-searched powers of
  two; measured on the corrupted digits and Adult, bench/robust_digits.py).
* ``solver.game.eta_lambda: "auto"`` is the linear games' (0.1 for the Lagrangian, 1.0 for
  the proxy-Lagrangian, lowered where the rate estimates are noisy). On the corrupted
  digits' robust objective a smaller step fits the training sets more closely but leaves
  a higher worst-set test error, so the default stays
  (bench/robust_digits.py ``--eta-lambda``, docs/benchmarks.md; ``--tune`` chooses both
  steps on validation data).
* ``iterations: "auto"`` plays doubling stages until the stage's mixture stops improving
  (:func:`~worker.algorithms.runners.games.play`; the mixture's objective is the worst term's
  expected loss over every row), or the time limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from worker.algorithms.run.arrays import DOG_START
from worker.algorithms.run.game_rounds import rate_arrays
from worker.algorithms.run.game_start import initial_multipliers
from worker.algorithms.run.loop import ChunkedLoop, ProgressCallback
from worker.algorithms.run.options import SolverOptions, start_point
from worker.algorithms.run.step_rule import copied, probe_steps
from worker.algorithms.runners.games import (
    PROBE_ITERATIONS,
    THETA_DIAMETER_FRACTION,
    GameStats,
    formulation_of,
    game_config,
    play,
)
from worker.candidates.shrink import least_violation
from worker.candidates.trajectory import Trajectory
from worker.kernels.games import LAGRANGIAN
from worker.kernels.layout import (
    CHECKS,
    ITERATION,
    N_COUNTERS,
    N_SCALARS,
    RADIUS,
    STEP_DOG,
    STEP_SCHEDULE,
)
from worker.kernels.network_game import (
    NetworkConfig,
    NetworkState,
    NetworkTerms,
    network_game_steps,
)
from worker.kernels.random import seed_state
from worker.problem.network import NetworkProblem, Term
from worker.stats import Stats, Value

#: AdaGrad's step of ``eta_w: "auto"`` on a network with hidden layers.
AUTO_ETA = 0.05


@dataclass(frozen=True)
class NetworkGameStats(Stats):
    """The network games' record (:mod:`worker.stats`): the game's, the parameters' step and
    count, the step rule's warm-up, and (a robust objective) the slack at the end."""

    game: GameStats
    eta_w: float
    parameters: int
    steps: Mapping[str, Value]
    final_slack: float | None


def network_terms(problem: NetworkProblem) -> NetworkTerms:
    """Every term's rows stacked into one CSR, with where each term's rows start: the
    objective's terms (weighted by lambda[0], or by their slack constraints' multipliers when
    robust), then the group losses' (their constraints' multipliers, after the rates and
    the slacks: :attr:`NetworkProblem.m_total`'s order)."""
    terms = problem.terms + [bounded.term for bounded in problem.bounded]
    features = sp.vstack([term.features for term in terms], format="csr", dtype=np.float64)
    q, first = len(problem.terms), problem.m + (len(problem.terms) if problem.robust else 0)
    slots = [problem.m + i if problem.robust else -1 for i in range(q)]
    return NetworkTerms(
        x_indptr=features.indptr.astype(np.int64), x_indices=features.indices.astype(np.int64),
        x_data=np.ascontiguousarray(features.data),
        labels=np.concatenate([term.labels for term in terms]).astype(np.float64),
        **_term_weights(terms),
        row_at=np.cumsum([0] + [term.n for term in terms]).astype(np.int64),
        code=np.array([term.code for term in terms], dtype=np.int64),
        l1=np.array([term.l1 for term in terms], dtype=np.float64),
        l2=np.array([term.l2 for term in terms], dtype=np.float64),
        slot=np.array(slots + [first + j for j in range(len(problem.bounded))],
                      dtype=np.int64),
        bound=np.array([np.nan] * q + [b.bound for b in problem.bounded], dtype=np.float64))


def _term_weights(terms: list[Term]) -> dict[str, np.ndarray]:
    """``weights``, every term's example weights of mean 1 stacked (1 for a term without
    them), and ``cumulative``, each term's running sums of them; both empty when no term
    has weights."""
    if all(term.weights is None for term in terms):
        return {"weights": np.zeros(0), "cumulative": np.zeros(0)}
    weights = [np.ones(term.n) if term.weights is None else term.weights for term in terms]
    return {"weights": np.concatenate(weights),
            "cumulative": np.concatenate([np.cumsum(c) for c in weights])}


def new_state(theta: np.ndarray, slack_upper: float, m: int, formulation: int, terms: int,
              seed: int) -> NetworkState:
    """The game's state at theta(1) (P,), xi = ``slack_upper``, m constraint values,
    :func:`~worker.algorithms.run.game_start.initial_multipliers` and DoG's r_eps."""
    lam, log_m, log_lam = initial_multipliers(m, formulation)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    scalars = np.zeros(N_SCALARS)
    scalars[RADIUS] = DOG_START * (1.0 + float(np.linalg.norm(theta)))
    return NetworkState(theta=theta, direction=np.zeros_like(theta),
                        squares=np.zeros_like(theta), origin=theta.copy(), scalars=scalars,
                        slack=np.array([slack_upper]), slack_squares=np.zeros(1),
                        values=np.zeros(m), lam=lam, log_m=log_m, log_lam=log_lam,
                        losses=np.zeros(terms), counters=counters, rng=seed_state(seed))


def measured_step(problem: NetworkProblem, advance: Callable[[NetworkConfig, NetworkState, int],
                                                             None],
                  cfg: NetworkConfig, state: NetworkState, deadline: float) -> tuple[float, dict]:
    """``eta_w: "auto"`` on a linear model: DoG steps on a copy of ``state`` with the
    multipliers held (:func:`~worker.algorithms.runners.games.measured_theta_step`; for a robust
    objective at equal weights on the terms), then AdaGrad's
    per-coordinate step THETA_DIAMETER_FRACTION times the largest distance a coordinate
    went; ``AUTO_ETA`` on a network with hidden layers."""
    if len(problem.network.sizes) > 2:
        return AUTO_ETA, {}
    probe = copied(state)
    if problem.robust:              # the terms' mean loss: the slack alone moves no theta
        probe.lam[:] = 0.0
        probe.lam[1 + problem.m:1 + problem.m + len(problem.terms)] = 1.0 / len(problem.terms)
    held = cfg._replace(game=cfg.game._replace(eta_lambda=0.0, step_rule=STEP_DOG,
                                               formulation=LAGRANGIAN))  # lambda as set
    taken = probe_steps(lambda count: advance(held, probe, count), PROBE_ITERATIONS, deadline)
    reach = float(np.abs(probe.theta - probe.origin).max(initial=0.0))
    eta = THETA_DIAMETER_FRACTION * reach if reach > 0 else AUTO_ETA
    return eta, {"eta_w_warmup": "dog", "warmup_iterations": taken,
                 "warmup_radius": float(probe.scalars[RADIUS]), "warmup_reach": reach}


#: A lower bound on every network objective: mean losses (logistic, hinge, squared, squared
#: hinge, softmax cross-entropy) plus l1 and l2 penalties are at least 0, so a stage's
#: objective is within itself of the optimum
#: (:class:`~worker.algorithms.run.stopping.StageEstimate`).
OBJECTIVE_LOWER = 0.0


def mixture_value(problem: NetworkProblem, thetas: np.ndarray, weights: np.ndarray
                  ) -> tuple[float, float, float]:
    """(the mixture's objective: the worst term's expected loss, the least largest expected
    violation of the rates and group losses by any mixture of ``thetas``, no statistical
    floor) for ``weights`` (C,) over ``thetas`` (C, P)."""
    losses = weights @ problem.term_losses(thetas)
    return float(losses.max()), least_violation(problem.constraint_values(thetas)), 0.0


def run_network_game(problem: NetworkProblem, options: SolverOptions, algorithm: str,
                     progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """Play ``algorithm`` (lagrangian or proxy_lagrangian) with the network theta-player."""
    formulation = formulation_of(algorithm, options)
    m = problem.m_total
    rates = rate_arrays(problem.rates, problem.network.inputs,
                        relaxed=formulation == LAGRANGIAN)
    game = game_config(replace(options, eta_w=AUTO_ETA if options.eta_w is None
                               else options.eta_w), formulation, m, rates)._replace(
                                   step_rule=STEP_SCHEDULE)
    theta = start_point(problem, options, problem.network.initial(problem.init_seed))
    slack_upper = float(problem.term_losses(theta[None, :]).max()) if problem.robust else 0.0
    state = new_state(theta, slack_upper, m, formulation,
                      len(problem.terms) + len(problem.bounded), options.seed)
    cfg = NetworkConfig(game=game, robust=problem.robust, slack_upper=slack_upper,
                        slack_eta=slack_upper / math.sqrt(2.0))
    net, terms = problem.network.arrays(), network_terms(problem)

    def steps(config: NetworkConfig, current: NetworkState, count: int) -> None:
        network_game_steps(net, terms, rates, problem.lower, problem.upper, config, current,
                           count)

    step_stats = {}
    if options.eta_w is None:
        eta, step_stats = measured_step(problem, steps, cfg, state, deadline)
        cfg = cfg._replace(game=cfg.game._replace(eta_w=eta))

    def describe() -> tuple[float, float, int]:
        """The last minibatch's estimates: objective (max over the objective's terms) and
        violation (rates and group losses)."""
        values = np.concatenate([state.values[:problem.m], state.values[m - len(problem.bounded):]])
        violation = max(0.0, float(values.max(initial=0.0)))
        return float(state.losses[:len(problem.terms)].max()), violation, \
            int(state.counters[CHECKS])

    loop = ChunkedLoop(deadline, options.iterations, describe, progress)
    candidates, baseline, game = play(
        loop, lambda count: steps(cfg, state, count), state.theta, state.lam, state.counters,
        options, cfg.game, lambda thetas, weights: mixture_value(problem, thetas, weights),
        lower=OBJECTIVE_LOWER)
    stats = NetworkGameStats(game, cfg.game.eta_w, problem.d, step_stats,
                             float(state.slack[0]) if problem.robust else None)
    return Trajectory(algorithm, candidates, None, stats, baseline)
