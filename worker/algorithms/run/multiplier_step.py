"""``solver.game.eta_lambda: "auto"``: the lambda-player's step of the games of
:mod:`worker.algorithms.runners.games` (Cotter, Jiang, Sridharan 2019, Algorithms 2 and 3).

The base step is 1.0 for the proxy-Lagrangian (a multiplicative step: a constraint violated
by 0.05 multiplies its weight by e^0.05 per step, so the weights can move across the 1e-3
floor and back within a few hundred steps) and 0.1 for the Lagrangian (an additive step on
unbounded multipliers, which 1.0 lets run away on the Adult problem of §6.2). Both were
chosen on that problem (bench/adult_fairness.py, docs/benchmarks.md); the Lemmas'
eta_lambda ~ sqrt((m+1) ln(m+1) / T) / B is far too cautious for T of a few thousand.

Either is lowered to NOISE_BUDGET / sigma^2 where sigma^2, a bound on the variance of one
step's estimate of a rate constraint (:func:`rate_noise`, the largest over the constraints),
is larger. The lambda-player sees those estimates, and a met constraint with slack s, whose
log-weight (the weight itself for the Lagrangian) takes steps of mean -eta s and variance
eta^2 sigma^2, floats above its floor by about eta sigma^2 / (2 s) on noise alone (the
stationary mean of a reflected random walk), taking weight from the objective. Rates over
small subsets are that noisy (sigma^2 ~ 1 / (k_r p) for a share p of the examples): Adult's
TPR parity over the six sex x race cells in both directions (12 constraints, sigma^2 = 5.4
against 0.8 for §6.2's four groups) left at 1.0 little of lambda on the objective and a test
error well above ExponentiatedGradient's, and the lowered step closes the gap (measured:
docs/algorithms.md#rate-constraints-and-the-two-player-games).
"""

from __future__ import annotations

import numpy as np

from worker.kernels.games import LAGRANGIAN, PROXY_EXTERNAL, PROXY_SWAP, RateArrays

AUTO_ETA_LAMBDA = {LAGRANGIAN: 0.1, PROXY_SWAP: 1.0, PROXY_EXTERNAL: 1.0}
#: ``eta_lambda: "auto"`` keeps eta_lambda sigma^2 at most this (module docstring).
NOISE_BUDGET = 0.25


def rate_noise(rates: RateArrays | None, k_r: int) -> float:
    """sigma^2: the largest variance of one step's estimate of a rate constraint, bounded.

    A step estimates g_k = c_k + sum_i a_ki z_i (z_i an indicator, an entry per example and
    side) by (n_r / k_r) times the sum over k_r examples drawn uniformly, so its variance is
    at most (n_r / k_r) sum_i a_ki^2 (the second moment of one draw). It grows as a rate's
    subset shrinks: 1 / (k_r p) for a rate over a share p of the examples.
    """
    if rates is None or rates.constant.shape[0] == 0 or rates.wt_weight.shape[0] == 0:
        return 0.0
    n_r = rates.wt_indptr.shape[0] - 1
    squares = np.bincount(rates.wt_constraint, weights=rates.wt_weight ** 2,
                          minlength=rates.constant.shape[0])
    return float(n_r / k_r * squares.max())


def auto_eta_lambda(formulation: int, noise: float) -> float:
    """AUTO_ETA_LAMBDA of ``formulation``, lowered to NOISE_BUDGET / sigma^2 for rate
    estimates of variance up to ``noise`` = sigma^2 (:func:`rate_noise`)."""
    base = AUTO_ETA_LAMBDA[formulation]
    return base if noise <= NOISE_BUDGET / base else NOISE_BUDGET / noise
