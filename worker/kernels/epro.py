"""The inner loop of Epro-SGD (Chen, Yang, Lin, Zhang, Chang, "Optimal Stochastic Strongly
Convex Optimization with a Logarithmic Number of Projections", Algorithm 1, lines 4-7).

Inside an epoch the step size is constant and there is no projection onto the constraints:
SGD runs on the augmented objective F(x) = f(x) + lambda [c(x)]_+ (Eq. 7) with
c(x) = max_i g_i(x), the maximum of the unit-norm affine constraints (the paper's Example 3,
a polyhedral c satisfying Lemma 1). The box W stays a per-coordinate clip every step, as in
every other loop of the engine. The caller projects the epoch average onto the feasible set.
"""

from __future__ import annotations

from worker.kernels.constraints import group_value
from worker.kernels.gradient import stochastic_gradient
from worker.kernels.jit import kernel
from worker.kernels.layout import CHECKS, ITERATION


@kernel
def add_penalty_subgradient(p, w, penalty, counters, out):
    """out += penalty * (a subgradient of [c(w)]_+), c = max_i g_i (Eq. 7); m checks.

    Parameters
    ----------
    p : ProblemArrays
        Built with one constraint group holding all m constraints, so that
        ``group_value(p, 0, w)`` is (c(w), argmax_i g_i(w)).
    w : ndarray, shape (d,)
    penalty : float
        lambda of Eq. (7).
    counters : ndarray, int64
        ``counters[CHECKS]`` is increased by m.
    out : ndarray, shape (d,)
        Gets penalty * a_i added for the most violated row i when c(w) > 0.
    """
    if p.rhs.shape[0] == 0:
        return
    value, i = group_value(p, 0, w)
    counters[CHECKS] += p.rhs.shape[0]
    if value > 0:
        for k in range(p.a_indptr[i], p.a_indptr[i + 1]):
            out[p.a_indices[k]] += penalty * p.a_data[k]


@kernel
def epro_sgd_steps(p, w, total, direction, eta, penalty, k_f, rng, counters, n_steps):
    """n_steps of x <- clip_W(x - eta (g(x) + penalty d[c(x)]_+)) (Algorithm 1, line 6).

    Parameters
    ----------
    p : ProblemArrays
        Built with one constraint group holding all m constraints; m checks per step.
    w : ndarray, shape (d,)
        The iterate x_t, updated in place.
    total : ndarray, shape (d,)
        Running sum of the epoch's iterates x_1 + ... + x_t (line 8 averages it); x_t is added
        before it is stepped, so after T_k steps it holds the sum of x_1..x_{T_k}.
    direction : ndarray, shape (d,)
        Scratch for the step direction.
    eta : float
        The epoch's constant step eta_k.
    penalty : float
        lambda of Eq. (7), lambda > G_1 / rho (Lemma 2).
    k_f : int
        Examples per stochastic gradient of f.
    rng : ndarray, uint64, shape (2,)
    counters : ndarray, int64
        ``ITERATION``, ``CHECKS`` and ``GRADIENT_SAMPLES`` are advanced.
    n_steps : int
    """
    d = w.shape[0]
    for _ in range(n_steps):
        for j in range(d):
            total[j] += w[j]
        stochastic_gradient(p, w, k_f, rng, counters, direction)
        add_penalty_subgradient(p, w, penalty, counters, direction)
        for j in range(d):
            w[j] = min(max(w[j] - eta * direction[j], p.lower[j]), p.upper[j])
        counters[ITERATION] += 1
