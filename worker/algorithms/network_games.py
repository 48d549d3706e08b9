"""The Lagrangian and proxy-Lagrangian games on a :class:`~worker.problem.network.NetworkProblem`
(Cotter, Jiang, Sridharan 2019, §5's practical procedure; §6.1 for robust objectives).

The same games as :mod:`worker.algorithms.games` (the same lambda-player, defaults, candidates
and theta-bar), with the theta-player stepping through the network
(:func:`~worker.kernels.network_game.network_game_steps`) by diagonal AdaGrad, as the paper's
§6 does for both players. A robust objective max_i L_i is played as Equation 3: minimize the
slack xi subject to L_i(theta) <= xi, with xi in [0, max_i L_i(theta(1))] (the start bounds
the optimum from above), starting at that upper end and stepping by AdaGrad with the step
its regret bound asks for, the interval's length over sqrt(2) (Duchi, Hazan & Singer 2011),
so that xi can cross its range within a few hundred steps whatever theta's step is.

Defaults:

* ``eta_w: "auto"`` is AdaGrad's step :data:`AUTO_ETA`, so a coordinate moves by about
  eta_w / sqrt(t) after t steps of steady gradients whatever their scale (the paper's §6
  grid-searched powers of two; measured on the corrupted digits and Adult,
  bench/robust_digits.py).
* ``solver.game.eta_lambda: "auto"`` is the linear games' (0.1 for the Lagrangian, 1.0 for
  the proxy-Lagrangian). On the corrupted digits' robust objective a smaller step fits the
  training sets more closely but leaves a higher worst-set test error, so the default stays
  (bench/robust_digits.py ``--eta-lambda``, docs/benchmarks.md; ``--tune`` chooses both
  steps on validation data).
* ``iterations: "auto"`` is :data:`AUTO_EPOCHS` passes of k_f-row minibatches over the
  largest term, at least :data:`MIN_ITERATIONS` and at most the games' 200,000 (the time
  limit stops it earlier).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from worker.algorithms.games import (
    formulation_of,
    game_config,
    initial_multipliers,
    play,
    rate_arrays,
)
from worker.algorithms.loop import ChunkedLoop, ProgressCallback
from worker.algorithms.options import SolverOptions, Trajectory, start_point
from worker.kernels.games import LAGRANGIAN
from worker.kernels.layout import CHECKS, ITERATION, N_COUNTERS
from worker.kernels.network_game import (
    NetworkConfig,
    NetworkState,
    NetworkTerms,
    network_game_steps,
)
from worker.kernels.random import seed_state
from worker.problem.network import NetworkProblem

AUTO_ETA = 0.05
AUTO_EPOCHS = 100
MIN_ITERATIONS = 2_000


def network_terms(problem: NetworkProblem) -> NetworkTerms:
    """Every term's rows stacked into one CSR, with where each term's rows start."""
    features = sp.vstack([term.features for term in problem.terms], format="csr",
                         dtype=np.float64)
    return NetworkTerms(
        x_indptr=features.indptr.astype(np.int64), x_indices=features.indices.astype(np.int64),
        x_data=np.ascontiguousarray(features.data),
        labels=np.concatenate([term.labels for term in problem.terms]).astype(np.float64),
        row_at=np.cumsum([0] + [term.n for term in problem.terms]).astype(np.int64),
        code=np.array([term.code for term in problem.terms], dtype=np.int64),
        l1=np.array([term.l1 for term in problem.terms], dtype=np.float64),
        l2=np.array([term.l2 for term in problem.terms], dtype=np.float64))


def auto_iterations(problem: NetworkProblem, options: SolverOptions, k_f: int) -> int:
    """The budget of ``iterations: "auto"`` (module docstring), or the one given."""
    if not options.until_converged:
        return options.iterations
    epochs = math.ceil(AUTO_EPOCHS * max(term.n for term in problem.terms) / k_f)
    return min(max(epochs, MIN_ITERATIONS), options.iterations)


def run_network_game(problem: NetworkProblem, options: SolverOptions, algorithm: str,
                     progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """Play ``algorithm`` (lagrangian or proxy_lagrangian) with the network theta-player."""
    formulation = formulation_of(algorithm, options)
    m = problem.m_total
    if options.eta_w is None:
        options = replace(options, eta_w=AUTO_ETA)
    game = game_config(options, formulation, m)
    theta = start_point(problem, options, problem.network.initial(problem.init_seed))
    slack_upper = float(problem.term_losses(theta[None, :]).max()) if problem.robust else 0.0
    lam, log_m, log_lam = initial_multipliers(m, formulation)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    state = NetworkState(theta=theta, direction=np.zeros_like(theta),
                         squares=np.zeros_like(theta), slack=np.array([slack_upper]),
                         slack_squares=np.zeros(1), values=np.zeros(m), lam=lam, log_m=log_m,
                         log_lam=log_lam, losses=np.zeros(len(problem.terms)),
                         counters=counters, rng=seed_state(options.seed))
    cfg = NetworkConfig(game=game, robust=problem.robust, slack_upper=slack_upper,
                        slack_eta=slack_upper / math.sqrt(2.0))
    net, terms = problem.network.arrays(), network_terms(problem)
    rates = rate_arrays(problem.rates, problem.network.inputs,
                        relaxed=formulation == LAGRANGIAN)
    iterations = auto_iterations(problem, options, game.k_f)

    def describe() -> tuple[float, float, int]:
        """The last minibatch's estimates: objective (max over terms) and violation."""
        violation = max(0.0, float(state.values[:problem.m].max(initial=0.0)))
        return float(state.losses.max()), violation, int(state.counters[CHECKS])

    def advance(count: int) -> None:
        network_game_steps(net, terms, rates, problem.lower, problem.upper, cfg, state, count)

    loop = ChunkedLoop(deadline, iterations, describe, progress)
    candidates, baseline, stats = play(loop, advance, state.theta, state.lam, state.counters,
                                       replace(options, iterations=iterations), game)
    stats.update(eta_w=game.eta_w, parameters=problem.d)
    if problem.robust:
        stats["final_slack"] = float(state.slack[0])
    return Trajectory(algorithm, candidates, None, stats, baseline)
