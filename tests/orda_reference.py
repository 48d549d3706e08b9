"""Plain-numpy ORDA (the Epro paper's Algorithm 2), the oracle for :mod:`worker.kernels.orda`.

Written from the pseudocode with its own symbols (theta_t, nu_t, gamma_t, gbar_t as the
weighted sum of G_tau / nu_tau), dense arithmetic, and the random numbers of
:class:`tests.reference.Xoroshiro` drawn in the kernel's order.
"""

from __future__ import annotations

import numpy as np

from tests import reference
from worker.problem.compiled import CompiledProblem


def proximal(problem: CompiledProblem, linear: np.ndarray, weight: float,
             centre: np.ndarray) -> np.ndarray:
    """argmin over the box of linear . x + (weight/2)||x - centre||^2 + l1||x||_1
    + (l2/2)||x||^2, coordinate by coordinate."""
    o = problem.objective
    v = weight * centre - linear
    shrunk = np.sign(v) * np.maximum(np.abs(v) - o.l1, 0.0) / (weight + o.l2)
    return np.clip(shrunk, problem.lower, problem.upper)


def orda(problem: CompiledProblem, x1: np.ndarray, *, eta: float, penalty: float, k_f: int,
         steps: int, seed: int) -> dict:
    """``steps`` iterations t = 1..steps of Algorithm 2 from x_1 = z_1 = x1.

    Returns the iterates x_1..x_{steps+1} (steps+1, d) and the last z (d,).
    """
    rng = reference.Xoroshiro(seed)
    x_dense = problem.objective.features.toarray()
    x, z = x1.copy(), x1.copy()
    scaled_sum = np.zeros_like(x1)  # sum_tau G_tau / nu_tau
    history = [x.copy()]
    for t in range(1, steps + 1):
        theta, nu = 2 / (t + 1), 2 / t
        gamma, gamma_next = t**1.5 / eta, (t + 1) ** 1.5 / eta
        u = (1 - theta) * x + theta * z
        g = reference.sampled_loss_gradient(problem, x_dense, x, rng, k_f) + \
            reference.penalty_subgradient(problem, x, penalty)
        scaled_sum += g / nu
        gbar = theta * nu * scaled_sum
        z = proximal(problem, gbar, theta * nu * gamma_next, x1)
        x = proximal(problem, g, gamma, u)
        history.append(x.copy())
    return {"iterates": np.array(history), "z": z}
