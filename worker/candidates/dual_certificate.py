"""A lower bound on a hinge-loss LP from any dual multipliers: valid at every size.

The hinge is max(0, 1 - z) = max over a in [0, 1] of a (1 - z). So for the rows y_i x_i
(n, d), constraints A w <= b (m, d), the box lower <= w <= upper, any example weights
alpha in [0, 1]^n and any constraint multipliers lam >= 0 (m,),

    D(alpha, lam) = (1/n) sum_i e_i alpha_i - lam . b + sum_j min(c_j lower_j, c_j upper_j),
    c = -(1/n) sum_i e_i alpha_i y_i x_i + A^T lam,

with e the example weights of mean 1 (all 1 without weights), is at most f(w) for every
feasible w: f(w) >= (1/n) sum_i e_i alpha_i (1 - z_i(w)) >= that plus lam . (A w - b)
= (1/n) sum_i e_i alpha_i - lam . b + c . w >= D. This is weak duality for
the LP; it needs no solver's tolerance to hold, only a finite box wherever c_j != 0 (with
an infinite side there D is -inf). :func:`dual_value` evaluates D exactly as written, in one
pass over the rows, so any multipliers give a certified bound, and fitting them only decides
how close it is.

Fitting. With alpha fixed, the best lam solves ``min {c_alpha . w : A w <= b, box}``'s dual.
When every constraint is an ordering w_t <= w_h and the box is constant on each connected
piece (the monotone lattice), that LP is a minimum-weight closure: the isotonic regression
v of -g (g = -(1/n) sum alpha_i y_i x_i) on the order, with its edge multipliers mu, gives
g + A^T mu = -v, and mu is optimal (complementary slackness holds on v's blocks); so is
any lam of least ||c||_1 on each piece of the order (sum_j c_j is fixed there), and
:func:`ordering_multipliers` fits lam exactly by one maximum flow
(:func:`worker.kernels.isotonic.closure_flow`: min ||c||_1 is routing -g along the edges;
3-6 times faster than the whole isotonic regression, which splits the order block by
block: docs/guarantees.md#the-bound-at-a-million-constraints). alpha comes from an LP's duals (the
band LP of :mod:`worker.candidates.lower_bound`, solved by HiGHS's first-order PDLP at
scale), or from the reference point's margins alone (1 below the kink, 0 above it).
"""

from __future__ import annotations

import numpy as np

from worker.candidates.hinge_lp import SignedRows
from worker.candidates.order_box import OrderBox
from worker.problem.compiled import CompiledProblem


def dual_value(problem: CompiledProblem, signed: SignedRows, alpha: np.ndarray,
               lam: np.ndarray) -> float:
    """D(alpha, lam) of the module docstring: a lower bound on the problem's optimum.

    Parameters
    ----------
    problem : CompiledProblem
        A hinge-loss LP (:func:`worker.candidates.hinge_lp.has_hinge_lp`).
    signed : SignedRows
        Its rows y_i x_i.
    alpha : ndarray, shape (n,)
        Example weights; clipped to [0, 1] (any value there gives a valid bound).
    lam : ndarray, shape (m,)
        Constraint multipliers; clipped to >= 0.

    Returns
    -------
    float
        The bound; ``-inf`` when c_j != 0 on a side of the box that is infinite.
    """
    alpha = np.clip(alpha, 0.0, 1.0)
    lam = np.maximum(lam, 0.0)
    return value_of_cost(problem, signed, alpha, lam, reduced_cost(problem, signed, alpha, lam))


def reduced_cost(problem: CompiledProblem, signed: SignedRows, alpha: np.ndarray,
                 lam: np.ndarray) -> np.ndarray:
    """c = -(1/n) sum_i alpha_i y_i x_i + A^T lam (module docstring), shape (d,)."""
    return -signed.transpose_dot(alpha) / signed.shape[0] + problem.constraints.matrix.T @ lam


def value_of_cost(problem: CompiledProblem, signed: SignedRows, alpha: np.ndarray,
                  lam: np.ndarray, cost: np.ndarray) -> float:
    """D(alpha, lam) from its reduced ``cost`` (d,) (:func:`reduced_cost`), for ``alpha``
    (n,) in [0, 1] and ``lam`` (m,) >= 0 as they are (:func:`dual_value` clips them), with
    ``signed``'s example weights."""
    with np.errstate(invalid="ignore"):        # 0 * inf on a free side with c_j == 0
        low = np.where(cost > 0, cost * problem.lower,
                       np.where(cost < 0, cost * problem.upper, 0.0))
    if not np.isfinite(low).all():
        return -np.inf
    return float(signed.mass(alpha) / signed.shape[0] - lam @ problem.constraints.rhs
                 + low.sum())


def alpha_of_duals(scaled: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """alpha (k,) from k hinge rows' LP duals times n, which lie in [0, e_i] for the example
    weights e (k,) of mean 1: divided by e, 0 where e_i = 0."""
    return np.divide(scaled, weights, out=np.zeros_like(scaled), where=weights > 0)


def margin_weights(margins: np.ndarray) -> np.ndarray:
    """alpha from a reference point's margins: 1 below the kink, 0 above, 1/2 on it."""
    return np.where(margins < 1.0, 1.0, np.where(margins > 1.0, 0.0, 0.5))


def ordering_multipliers(problem: CompiledProblem, signed: SignedRows, alpha: np.ndarray,
                         order: OrderBox | None = None) -> np.ndarray | None:
    """The best lam >= 0 for ``alpha`` (module docstring: the flow of least imbalance,
    shape (m,)), or None when a constraint is no ordering or the box is not constant on a
    piece of the order (then the closure's form does not hold; any lam stays valid).
    ``order``: the problem's :class:`OrderBox` when the caller refits many times (built
    here otherwise)."""
    order = OrderBox.of(problem) if order is None else order
    if order is None:
        return None
    return order.multipliers(-signed.transpose_dot(np.clip(alpha, 0.0, 1.0)) / signed.shape[0])
