"""Raising the dual certificate by supergradient ascent on the example weights.

For fixed example weights alpha the best constraint multipliers on an order are one maximum
flow (:func:`worker.candidates.dual_certificate.ordering_multipliers`), so the certificate
is a concave function of alpha alone,

    phi(alpha) = (1/n) sum_i alpha_i + min { -(1/n) sum_i alpha_i z_i(w) : w in C },

C the order's cone within the box, and a supergradient at alpha is (1/n)(1 - z_i(w_alpha))
at the inner minimizer w_alpha: lower or upper on each coordinate, by the sign of the
refitted reduced cost c (:func:`~worker.candidates.dual_certificate.dual_value`). Projected
supergradient steps alpha <- clip(alpha + t_k (1 - z(w_alpha)) / (upper - lower)) with
t_k = 2 STEP / sqrt(k) raise phi from the answer's margin weights, which leave a large
imbalance when the answer is far from the optimum: on the 2^14 lattice (114,688 edges,
1,000,000 pairs) from an answer at 0.450, phi rose from -0.160 to 0.226 in 15 steps and
20 s, where the band LP's PDLP multipliers gave -0.133 in 28 s
(docs/guarantees.md#the-bound-at-a-million-constraints). Every step's value is a valid
bound; the largest is kept.
"""

from __future__ import annotations

import time

import numpy as np

from worker.candidates.dual_certificate import dual_value, ordering_multipliers
from worker.candidates.hinge_lp import SignedRows
from worker.problem.compiled import CompiledProblem

#: The first step (then STEP / sqrt(k)), in units of the box's half-width: measured on the
#: 2^14 lattice, 0.3 rose fastest of 0.05, 0.3, 1 and 3 (3 overshot for 40 steps).
STEP = 0.3


def ascended_bound(problem: CompiledProblem, signed: SignedRows, alpha: np.ndarray,
                   seconds: float, steps: int = 1000) -> float | None:
    """The largest certificate phi (module docstring) over supergradient steps from
    ``alpha``, within ``seconds`` (at least one step) and at most ``steps``.

    Parameters
    ----------
    problem : CompiledProblem
        A hinge-loss LP whose constraints are an order with a box constant on each of its
        pieces (else :func:`ordering_multipliers` gives None, and so does this).
    signed : SignedRows, shape (n, d)
        Its rows y_i x_i.
    alpha : ndarray, shape (n,)
        The starting example weights in [0, 1].
    seconds : float
        The time the steps may take (each is a maximum flow and two passes over the rows).
    steps : int
        The most steps taken.

    Returns
    -------
    float or None
        The best bound (<= the optimum), or None when the order's refit does not apply or
        no value was finite.
    """
    began, best = time.perf_counter(), -np.inf
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    width = problem.upper - problem.lower
    n = signed.shape[0]
    for k in range(1, steps + 1):
        lam = ordering_multipliers(problem, signed, alpha)
        if lam is None:
            return None
        best = max(best, dual_value(problem, signed, alpha, lam))
        if time.perf_counter() - began >= seconds or not np.all(np.isfinite(width)):
            break
        cost = -signed.transpose_dot(alpha) / n + problem.constraints.matrix.T @ lam
        inner = np.where(cost > 0, problem.lower,
                         np.where(cost < 0, problem.upper, (problem.lower + problem.upper) / 2))
        slope = 1.0 - signed.margins(inner)
        alpha = np.clip(alpha + STEP / np.sqrt(k) * slope / (width.max() / 2), 0.0, 1.0)
    return float(best) if np.isfinite(best) else None
