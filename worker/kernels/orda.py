"""The inner loop of Epro-ORDA: optimal regularized dual averaging (ORDA) on the augmented
objective (Chen, Yang, Lin, Zhang, Chang, "Optimal Stochastic Strongly Convex Optimization
with a Logarithmic Number of Projections", Algorithm 2, run by Algorithm 3 line 4).

The objective splits as f^(x) = f(x) + r(x) (§3.3): f is the mean loss (or the quadratic),
reached only through stochastic subgradients g(x), and r(x) = l1 ||x||_1 + (l2/2)||x||^2
is the simple part, handled exactly by proximal steps, together with the box W (so the
paper's g is r plus the indicator of W, still separable). The constraints enter as
lambda [c(x)]_+ with c = max_i g_i, linearized like f (Eq. 16). Iteration t = 1, 2, ... of
an epoch started at x_1 (z_1 = x_1), with theta_t = 2/(t+1), nu_t = 2/t,
gamma_t = t^(3/2) / eta and G_t = g(x_t) + lambda d[c(x_t)]_+:

* u_t = (1 - theta_t) x_t + theta_t z_t                                           (line 4)
* gbar_t = theta_t nu_t sum_{tau<=t} G_tau / nu_tau = 2/(t(t+1)) sum_{tau<=t} tau G_tau
                                                                             (lines 5-6)
* z_{t+1} = argmin_{x in W} gbar_t . x + (theta_t nu_t gamma_{t+1} / 2)||x - x_1||^2 + r(x)
                                                                                   (line 7)
* x_{t+1} = argmin_{x in W} G_t . x + (gamma_t / 2)||x - u_t||^2 + r(x)           (line 8)

Each argmin is, per coordinate, ``clip_W(soft(a y - c, l1) / (a + l2))`` for weight a,
centre y and linear term c: the l1 soft threshold is what makes coordinates exactly zero.
z_{t+1} thresholds the averaged gradient gbar_t; x_{t+1}, whose centre u_t is 0 where x_t
and z_t are, thresholds the single stochastic G_t, so x stays exactly 0 on a coordinate
while |G_t| <= l1 there and otherwise moves O(1/gamma_t) off it. As in the paper, the
subgradient is taken at x_t (lines 5, 8); u_t is the centre of x's proximal step. ORDA's
output after T + 1 iterations is x_{T+2} (line 10).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from worker.kernels.epro import add_penalty_subgradient
from worker.kernels.gradient import stochastic_loss_gradient
from worker.kernels.jit import kernel
from worker.kernels.layout import ITERATION

OrdaState = namedtuple("OrdaState", [
    "x",          # x_t (d,), updated in place; x_{T+2} is the epoch's output
    "z",          # z_t (d,), the dual-averaging sequence
    "start",      # x_1 (d,), the epoch's start, centre of z's proximal term
    "dual",       # sum_{tau<=t} tau G_tau (d,); gbar_t = 2/(t(t+1)) times it
    "direction",  # scratch for G_t (d,)
])


@kernel(inline="always")
def proximal_point(centre, weight, l1, l2, lower, upper):
    """argmin_{lower <= x <= upper} -centre x + (weight/2) x^2 + l1 |x| + (l2/2) x^2.

    The unconstrained minimizer soft(centre, l1) / (weight + l2), clipped (one dimension);
    exactly 0 when |centre| <= l1 and 0 lies in [lower, upper].
    """
    if centre > l1:
        value = (centre - l1) / (weight + l2)
    elif centre < -l1:
        value = (centre + l1) / (weight + l2)
    else:
        value = 0.0
    return min(max(value, lower), upper)


@kernel
def orda_steps(p, s, eta, penalty, k_f, rng, counters, epoch_first, n_steps):
    """n_steps iterations of ORDA (Algorithm 2, lines 4-8; module docstring).

    Parameters
    ----------
    p : ProblemArrays
        Built with one constraint group holding all m constraints; m checks per step.
    s : OrdaState
        Mutated: x_t -> x_{t+1}, z_t -> z_{t+1}, the weighted gradient sum.
    eta : float
        The epoch's eta_k (gamma_t = t^(3/2) / eta_k).
    penalty : float
        lambda of Eq. (16), lambda > G_1 / rho (Lemma 4).
    k_f : int
        Examples per stochastic subgradient of the loss.
    rng : ndarray, uint64, shape (2,)
    counters : ndarray, int64
        ``ITERATION``, ``CHECKS`` and ``GRADIENT_SAMPLES`` are advanced.
    epoch_first : int
        ``counters[ITERATION]`` at the epoch's first iteration (its t = 1), so that chunked
        calls continue the same epoch.
    n_steps : int
    """
    d = s.x.shape[0]
    for _ in range(n_steps):
        t = float(counters[ITERATION] - epoch_first + 1)
        theta = 2.0 / (t + 1.0)
        gamma_t = t * np.sqrt(t) / eta
        mean_weight = 2.0 / (t * (t + 1.0))
        z_weight = 2.0 * mean_weight * (t + 1.0) * np.sqrt(t + 1.0) / eta
        stochastic_loss_gradient(p, s.x, k_f, rng, counters, s.direction)
        add_penalty_subgradient(p, s.x, penalty, counters, s.direction)
        for j in range(d):
            s.dual[j] += t * s.direction[j]
            u = (1.0 - theta) * s.x[j] + theta * s.z[j]
            s.z[j] = proximal_point(z_weight * s.start[j] - mean_weight * s.dual[j], z_weight,
                                    p.l1, p.l2, p.lower[j], p.upper[j])
            s.x[j] = proximal_point(gamma_t * u - s.direction[j], gamma_t, p.l1, p.l2,
                                    p.lower[j], p.upper[j])
        counters[ITERATION] += 1
