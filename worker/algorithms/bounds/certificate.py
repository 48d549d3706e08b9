"""A certified gap for ``iterations: "auto"`` on problems with linear constraints: the
objective of a feasible point against a Lagrangian dual bound.

For any multipliers lambda >= 0 and any convex f, weak duality gives

    f* >= q(lambda) = min_{x in W} L(x),   L(x) = f(x) + sum_i lambda_i g_i(x)

(Boyd & Vandenberghe, *Convex Optimization*, §5.2; the LightTouch paper's Lemma 1 uses the
same multipliers to make its penalty exact). q is bounded below at any point v of the box W
by the convexity of L: with r a subgradient of L's smooth part at v and sigma the strong
convexity of f (l2, plus the least eigenvalue of Q for a quadratic objective),

    q(lambda) >= L(v) + sum_j min_{x_j in [l_j, u_j]} r_j (x_j - v_j) + sigma/2 (x_j - v_j)^2
                                                     + l1 (|x_j| - |v_j|),

a Frank-Wolfe gap over the box when sigma = 0 (Jaggi, ICML 2013, §2), and each term has a
closed form. The bound is valid for every lambda >= 0 and v in W, and tight at a KKT pair:
lambda from the nonnegative least-squares fit of stationarity at the projected running
average (:func:`~worker.algorithms.run.penalty.stationary_multipliers`), v first that point and
then, if the gap is still too wide, the box minimizer of L found by L-BFGS-B (Byrd, Lu,
Nocedal & Zhu 1995). The upper end is f at the projected running average, a feasible point,
which is added to the candidates: the shrinking LP then returns a mixture at least as good.

A certificate needs the box to be finite where the gradient does not vanish, unless f is
strongly convex; without one (or with rate constraints, which are not convex, or a hinge
loss, whose bound from a subgradient stays loose) the stopping
rule falls back to its estimate (:mod:`worker.algorithms.run.phases`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from worker.algorithms.run.penalty import ACTIVE_TOLERANCE, stationary_multipliers
from worker.kernels.layout import ProblemArrays
from worker.kernels.objective import objective_gradient, objective_value
from worker.losses import is_smooth
from worker.problem.compiled import QUADRATIC, CompiledProblem
from worker.projection import project

#: The least eigenvalue of Q is computed when d is at most this (a dense eigendecomposition).
EIGEN_MAX_D = 1000
#: L-BFGS-B iterations towards the box minimizer of the Lagrangian.
REFINE_ITERATIONS = 200


@dataclass(frozen=True)
class Certificate:
    """f at a feasible point and a lower bound on the optimum.

    Attributes
    ----------
    upper : float
        f(point), an upper bound on the optimum f*.
    lower : float
        A lower bound on f* (-inf when none could be derived).
    point : ndarray, shape (d,)
        The feasible point (the projected running average).
    """

    upper: float
    lower: float
    point: np.ndarray

    @property
    def gap(self) -> float:
        """(upper - lower) relative to max(|upper|, |lower|): inf without a lower bound."""
        if not math.isfinite(self.lower):
            return math.inf
        return max(self.upper - self.lower, 0.0) / max(abs(self.upper), abs(self.lower), 1e-12)


def strong_convexity(problem: CompiledProblem) -> float:
    """sigma with f(x) >= f(v) + r'(x - v) + sigma/2 |x - v|^2: l2, plus lambda_min(Q)."""
    sigma = problem.objective.l2
    q = problem.objective.quadratic
    if problem.objective.kind == QUADRATIC and 0 < problem.d <= EIGEN_MAX_D:
        eigenvalues = np.linalg.eigvalsh(q.toarray())
        sigma += max(0.0, float(eigenvalues[0]) - 1e-9 * float(abs(eigenvalues).max()))
    return sigma


def certify(arrays: ProblemArrays, problem: CompiledProblem, average: np.ndarray,
            sigma: float, tolerance: float) -> Certificate | None:
    """The certificate at the running average (shape (d,)); None with rate constraints,
    for a hinge loss (not smooth: the bound is valid but loose, and the hinge LP's bound
    and polish serve it) or when the average cannot be projected exactly. L-BFGS-B refines
    the bound only while the gap at the projected point exceeds ``tolerance``."""
    if problem.rates is not None or not is_smooth(problem.objective.kind):
        return None
    projection = project(average, problem.constraints, problem.lower, problem.upper)
    if projection.status != "optimal":
        return None
    point = projection.solution
    upper = float(objective_value(arrays, point))
    # the penalty's looser active set: the projection may land on a neighbouring face, and a
    # multiplier on a constraint that turns out slack only costs its lambda_i g_i(x)
    scale = ACTIVE_TOLERANCE * max(1.0, float(np.abs(point).max(initial=0.0)))
    active, multipliers, _ = stationary_multipliers(arrays, problem, point, scale)
    lagrangian = Lagrangian(arrays, problem, active, np.maximum(multipliers, 0.0), sigma)
    lower = lagrangian.bound(point)
    if Certificate(upper, lower, point).gap > tolerance:
        lower = max(lower, lagrangian.bound(lagrangian.box_minimizer(point)))
    return Certificate(upper, lower, point)


@dataclass(frozen=True)
class Lagrangian:
    """L(x) = f(x) + lambda' (A_act x - b_act) for fixed multipliers of active rows."""

    arrays: ProblemArrays
    problem: CompiledProblem
    active: np.ndarray
    multipliers: np.ndarray
    sigma: float

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """L(x) and a subgradient (the l1 term's as sign(x)), shape (d,)."""
        rows = self.problem.constraints.matrix[self.active]
        gradient = np.empty_like(x)
        objective_gradient(self.arrays, x, gradient)
        gradient += rows.T @ self.multipliers
        value = float(objective_value(self.arrays, x))
        value += float(self.multipliers @ (rows @ x - self.problem.constraints.rhs[self.active]))
        return value, gradient

    def bound(self, v: np.ndarray) -> float:
        """A lower bound on min_{x in W} L(x) from v in W (module docstring)."""
        value, gradient = self.value_and_gradient(v)
        l1 = self.arrays.l1
        smooth_slope = gradient - l1 * np.sign(v)
        return value + float(box_minimum(v, smooth_slope, self.sigma, l1, self.problem.lower,
                                         self.problem.upper).sum())

    def box_minimizer(self, start: np.ndarray) -> np.ndarray:
        """An approximate minimizer of L over the box by L-BFGS-B from ``start``."""
        bounds = list(zip(np.where(np.isfinite(self.problem.lower), self.problem.lower, None),
                          np.where(np.isfinite(self.problem.upper), self.problem.upper, None),
                          strict=True))
        found = minimize(self.value_and_gradient, start, jac=True, method="L-BFGS-B",
                         bounds=bounds, options={"maxiter": REFINE_ITERATIONS})
        return np.clip(found.x, self.problem.lower, self.problem.upper)


def box_minimum(v: np.ndarray, slope: np.ndarray, sigma: float, l1: float,
                lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """min over x_j in [l_j, u_j] of slope_j (x_j - v_j) + sigma/2 (x_j - v_j)^2
    + l1 (|x_j| - |v_j|), per coordinate (shape (d,); -inf where it is unbounded below).

    The function is convex and piecewise smooth with a kink at 0, so its minimum is at an
    end of the interval, at 0, or at the stationary point of the piece x > 0 or x < 0
    (clipped to the piece, then to the interval: an empty piece's clip lands outside it).
    """
    def value(x):
        delta = x - v
        return slope * delta + 0.5 * sigma * delta * delta + l1 * (np.abs(x) - np.abs(v))

    candidates = [v, np.clip(0.0, lower, upper), np.where(np.isfinite(lower), lower, v),
                  np.where(np.isfinite(upper), upper, v)]
    if sigma > 0:
        candidates.append(np.clip(v - (slope + l1) / sigma, np.maximum(lower, 0.0), upper))
        candidates.append(np.clip(v - (slope - l1) / sigma, lower, np.minimum(upper, 0.0)))
    least = np.min([value(np.clip(x, lower, upper)) for x in candidates], axis=0)
    if sigma == 0:                    # linear towards an infinite end: unbounded below
        unbounded = (np.isinf(upper) & (slope + l1 < 0)) | (np.isinf(lower) & (slope - l1 > 0))
        least = np.where(unbounded, -np.inf, least)
    return least
