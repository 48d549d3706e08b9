"""A better answer and a certified lower bound together, for a hinge-loss LP on an order:
the primal-dual hybrid gradient method (Chambolle and Pock, 2011) on its saddle point.

The hinge is max(0, 1 - z) = max over a in [0, 1] of a (1 - z), so the LP is

    min over w in C of max over alpha in [0, 1]^n of L(w, alpha)
    = (1/n) sum_i c_i alpha_i (1 - y_i x_i . w),

C the order within the box (:class:`~worker.candidates.order_box.OrderBox`), c the example
weights of mean 1. Each step is

    w+     = P_C(w + tau (1/n) sum_i c_i alpha_i y_i x_i),
    alpha+ = clip(alpha + (1 - z_i(2 w+ - w)) / (omega |x_i|_1), 0, 1),

with the exact projection P_C (isotonic regression on the order started from w's level sets,
:func:`~worker.kernels.isotonic.isotonic_from`, then the box), the dual
steps sigma_i = n / (omega c_i |x_i|_1) (a step of alpha_i moves its own term by about what
it lacks of the kink) and tau = THETA omega / ||Sigma^(1/2) K||^2 (K the rows c_i y_i x_i /
n; the norm by power iteration), which keeps tau sigma ||K||^2 < 1, the method's condition
to converge. omega trades the primal's steps against the dual's; :data:`PRIMAL_WEIGHT` was
measured on the 2^14 lattice
(docs/guarantees.md#the-primal-dual-method-the-answer-and-the-bound-together).

Both halves are certified whatever the iterates: every w+ is feasible (a projection onto C),
so f(w+) is an answer's value, and every alpha gives the dual certificate
(:mod:`worker.candidates.dual_certificate`) with its constraint multipliers refitted by one
maximum flow, a bound below the optimum. A step costs two passes over the rows and one
isotonic regression; a refit costs a maximum flow, so the bound is taken every
:data:`REFIT_EVERY` steps and at the end. The best point and the best bound are kept.

There is no rule that stops it early for being slow: its first steps move the weights more
than the answer or the bound, and a rule judging them (1e-3 of the gap per second over the
last half of its refits) stopped a 600 s 2^14 job's method after 9 s, leaving a 7% gap where
running its whole share certified 0.47%
(docs/guarantees.md#the-primal-dual-method-the-answer-and-the-bound-together).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from worker.candidates.dual_certificate import margin_weights, value_of_cost
from worker.candidates.hinge_lp import SignedRows
from worker.candidates.order_box import OrderBox
from worker.problem.compiled import CompiledProblem

#: omega, the primal weight: of 0.01, 0.1, 1, 10, 15, 30, 100, 300, 1000 and 10^4, 30 raised the
#: bound and lowered the answer together fastest on the 2^14 lattice (larger ones raise the
#: bound faster at first while the answer rises; measured:
#: docs/guarantees.md#the-primal-dual-method-the-answer-and-the-bound-together).
PRIMAL_WEIGHT = 30.0
#: The share of the step's stability limit taken, below 1 since the power iteration's norm is
#: estimated from below.
THETA = 0.9
#: Power iterations for the norm ||Sigma^(1/2) K||.
NORM_ITERATIONS = 20
#: The bound is refitted (a maximum flow) every REFIT_EVERY steps.
REFIT_EVERY = 20


@dataclass(frozen=True)
class PrimalDual:
    """What the method found: the best feasible ``point`` (d,) and its ``objective``, the
    value of the projected start (``start_objective``), the best certified ``bound`` (None
    when no refit was finite: an infinite side of the box) and its example weights ``alpha``
    (n,), the ``steps`` taken, the ``refits`` made, why it stopped (``"time_limit"``,
    or ``"tolerance"``: the point certified within it) and its ``seconds``."""

    point: np.ndarray
    objective: float
    start_objective: float
    bound: float | None
    alpha: np.ndarray
    steps: int
    refits: int
    stopped: str
    seconds: float


def primal_dual(problem: CompiledProblem, signed: SignedRows, start: np.ndarray,
                deadline: float, tolerance: float, primal_weight: float = PRIMAL_WEIGHT,
                after_refit: Callable[[np.ndarray, float, float], None] | None = None
                ) -> PrimalDual | None:
    """The best point and bound of the steps from ``start`` (module docstring) until
    ``deadline`` (a ``time.perf_counter()`` value) or ``tolerance``; one refit at least.

    Parameters
    ----------
    problem : CompiledProblem
        A hinge-loss LP on an order with a box constant on its pieces (else None).
    signed : SignedRows
        Its rows y_i x_i (n, d), in memory or in partitions (the same methods).
    start : ndarray, shape (d,)
        The first point, projected; its margins give the first weights.
    deadline : float
        No step starts that would end the last refit past it (by the last ones' seconds).
    tolerance : float
        Stop once (objective - bound) <= tolerance |bound|.
    primal_weight : float
        omega.
    after_refit : callable, optional
        Hears of the best point (d,), its objective and the best bound at every refit.

    Returns
    -------
    PrimalDual or None
    """
    order = OrderBox.of(problem)
    if order is None:
        return None
    began, n = time.perf_counter(), signed.shape[0]
    step_alpha, tau = _step_sizes(signed, primal_weight)
    start = np.asarray(start, dtype=np.float64)
    w = order.project(start, near=start)   # exact from any grouping; fast from a projection
    margins = signed.margins(w)
    best = _Best(w, signed.mass(np.maximum(1.0 - margins, 0.0)) / n, margin_weights(margins))
    alpha, start_f = best.alpha, best.f
    steps, refits, refit_s, step_s, stopped = 0, 0, 0.0, 0.0, "time_limit"
    while True:
        gradient = signed.transpose_dot(alpha) / n
        step_began = time.perf_counter()
        last = steps > 0 and step_began + step_s + refit_s >= deadline
        if last or steps % REFIT_EVERY == 0:
            value = _certificate(problem, signed, order, alpha, gradient)
            refits, refit_s = refits + 1, time.perf_counter() - step_began
            ended = best.refit(value, alpha, tolerance)
            if after_refit is not None:
                after_refit(best.w, best.f, best.bound)
            if ended is not None or last:
                stopped = ended or stopped
                break
        step_began = time.perf_counter()
        w, margins, alpha = _step(order, signed, w, margins, alpha, tau * gradient, step_alpha)
        steps += 1
        best.point(w, signed.mass(np.maximum(1.0 - margins, 0.0)) / n)
        step_s = time.perf_counter() - step_began
    return PrimalDual(best.w, best.f, start_f, best.certified, best.alpha, steps, refits,
                      stopped, time.perf_counter() - began)


@dataclass
class _Best:
    """The best point ``w`` (d,) and its objective ``f``, the best ``bound`` and its example
    weights ``alpha`` (n,)."""

    w: np.ndarray
    f: float
    alpha: np.ndarray
    bound: float = -np.inf

    @property
    def certified(self) -> float | None:
        """The best bound, None when no refit was finite."""
        return float(self.bound) if np.isfinite(self.bound) else None

    def point(self, w: np.ndarray, f: float) -> None:
        """Keep ``w`` (d,) of objective ``f`` if it is the best."""
        if f < self.f:
            self.w, self.f = w, f

    def refit(self, value: float, alpha: np.ndarray, tolerance: float) -> str | None:
        """Keep the bound ``value`` of ``alpha`` (n,) if it is the best; ``"tolerance"`` when
        the best point is within ``tolerance`` of the best bound, else None."""
        if value > self.bound:
            self.bound, self.alpha = value, alpha
        if np.isfinite(self.bound) and self.f - self.bound <= tolerance * abs(self.bound):
            return "tolerance"
        return None


def _step(order: OrderBox, signed: SignedRows, w: np.ndarray, margins: np.ndarray,
          alpha: np.ndarray, move: np.ndarray, step_alpha: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step (module docstring) from w (d,) of ``margins`` (n,) and ``alpha`` (n,), the
    primal ``move`` tau (1/n) sum_i c_i alpha_i y_i x_i (d,): w+, its margins and alpha+."""
    w_next = order.project(w + move, near=w)
    next_margins = signed.margins(w_next)
    alpha = np.clip(alpha + step_alpha * (1.0 - (2.0 * next_margins - margins)), 0.0, 1.0)
    return w_next, next_margins, alpha


def _step_sizes(signed: SignedRows, primal_weight: float) -> tuple[np.ndarray, float]:
    """The dual steps sigma_i c_i / n = 1 / (omega |x_i|_1) (n,), 0 on an empty row, and the
    primal step tau (module docstring)."""
    reach = signed.reach()
    step_alpha = np.divide(1.0, primal_weight * reach, out=np.zeros(reach.size), where=reach > 0)
    return step_alpha, THETA * primal_weight / _norm_squared(signed, signed.weights, reach)


def _certificate(problem: CompiledProblem, signed: SignedRows, order: OrderBox,
                 alpha: np.ndarray, gradient: np.ndarray) -> float:
    """The dual certificate of ``alpha`` (n,) with its multipliers refitted by one flow, from
    ``gradient`` = (1/n) sum_i c_i alpha_i y_i x_i (d,)."""
    lam = order.multipliers(-gradient)
    return value_of_cost(problem, signed, alpha, lam,
                         -gradient + problem.constraints.matrix.T @ lam)


def _norm_squared(signed: SignedRows, weights: np.ndarray, reach: np.ndarray) -> float:
    """||Sigma^(1/2) K||^2 by :data:`NORM_ITERATIONS` power iterations, K the rows
    c_i y_i x_i / n and Sigma = diag(n / (c_i |x_i|_1)) (omega aside), so that
    Sigma^(1/2) K has rows sqrt(c_i / (n |x_i|_1)) y_i x_i."""
    n, d = signed.shape
    root = np.sqrt(np.divide(weights, n * reach, out=np.zeros(n), where=reach > 0))
    v = np.random.default_rng(0).standard_normal(d)
    value = 0.0
    for _ in range(NORM_ITERATIONS):
        u = root * signed.margins(v)
        image = signed.transpose_dot(np.divide(root * u, weights, out=np.zeros(n),
                                               where=weights > 0))
        value = float(np.linalg.norm(image))
        if value == 0.0:
            return 1.0
        v = image / value
    return value
