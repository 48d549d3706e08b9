"""A certified lower bound on the optimum from any point and any multipliers (weak duality).

For the problem min f(w) over the box lower <= w <= upper subject to A w <= b, with
f(w) = L(w) + l1 ||w||_1 + (l2/2) ||w||^2 and L convex, every linear minorant
L(w) >= const + g . w and every y >= 0 give

    LB = const - y . b + sum_j min_{lower_j <= t <= upper_j} [(g + A'y)_j t + l1 |t| + (l2/2) t^2]
       <= min { f(w) : A w <= b, w in the box },

since f(w) + y . (A w - b) <= f(w) on the feasible set and the right-hand minimum separates
by coordinate (the Lagrangian dual function of the problem with L replaced by its minorant).
The minorant is L's tangent at a point w_hat (const = L(w_hat) - g . w_hat, g = grad L(w_hat)),
or, for the hinge, (1/n) sum_i alpha_i (1 - y_i x_i . w) for any alpha in [0, 1]^n (the hinge
is the maximum of these over alpha). At a solver's answer and its multipliers the bound is
the optimum up to the solver's tolerance; it is valid for any input, so it certifies the
answer's gap even when the solver stopped early. A coordinate whose minimum is -inf (an
infinite side of the box, l2 = 0 and a slope beyond l1) makes the bound -inf (no
certificate).
"""

from __future__ import annotations

import numpy as np

from worker.algorithms.smooth_part import loss_value_and_gradient
from worker.problem.compiled import LOSS_HINGE, CompiledProblem


def coordinate_minimum(slope: np.ndarray, l1: float, l2: float, lower: np.ndarray,
                       upper: np.ndarray) -> np.ndarray:
    """min over lower_j <= t <= upper_j of slope_j t + l1 |t| + (l2/2) t^2, for each j.

    Parameters
    ----------
    slope, lower, upper : ndarray, shape (d,)
        ``lower`` may hold -inf and ``upper`` +inf.
    l1, l2 : float
        Non-negative weights.

    Returns
    -------
    ndarray, shape (d,)
        The minima; -inf where the function decreases without bound.

    Examples
    --------
    >>> coordinate_minimum(np.array([2.0, -1.0]), 0.5, 1.0, np.full(2, -1.0), np.full(2, 1.0))
    array([-1.   , -0.125])
    """
    shrunk = np.sign(slope) * np.maximum(np.abs(slope) - l1, 0.0)   # slope past the l1 kink
    with np.errstate(divide="ignore", invalid="ignore"):
        free = np.where(shrunk == 0, 0.0, -shrunk / l2 if l2 > 0 else -np.sign(shrunk) * np.inf)
    t = np.clip(free, lower, upper)
    minima = np.full(slope.shape, -np.inf)
    finite = np.isfinite(t)
    t = t[finite]
    minima[finite] = slope[finite] * t + l1 * np.abs(t) + 0.5 * l2 * t * t
    return minima


def lagrangian_bound(problem: CompiledProblem, point: np.ndarray, multipliers: np.ndarray,
                     hinge_weights: np.ndarray | None = None) -> float:
    """LB <= the problem's optimum (module docstring).

    Parameters
    ----------
    problem : CompiledProblem
        Objective, constraints A (m, d) and b (m,), box (d,); no rate constraints.
    point : ndarray, shape (d,)
        w_hat, where L's tangent is taken (not used for the hinge with ``hinge_weights``).
    multipliers : ndarray, shape (m,)
        y; negative entries are taken as 0.
    hinge_weights : ndarray, shape (n,), optional
        alpha for a hinge objective (clipped to [0, 1]); without them the tangent is used.

    Returns
    -------
    float
        The bound, or -inf when it is not finite.
    """
    objective, constraints = problem.objective, problem.constraints
    y = np.maximum(multipliers, 0.0)
    if objective.kind == LOSS_HINGE and hinge_weights is not None:
        alpha = np.clip(hinge_weights, 0.0, 1.0)
        n = objective.n
        signed = objective.features.multiply(objective.labels[:, None])
        slope = -np.asarray(signed.T @ alpha).ravel() / n
        constant = float(alpha.sum()) / n
    else:
        value, slope = loss_value_and_gradient(objective, point)
        constant = value - float(slope @ point)
    slope = slope + np.asarray(constraints.matrix.T @ y).ravel()
    minima = coordinate_minimum(slope, objective.l1, objective.l2, problem.lower, problem.upper)
    bound = constant - float(y @ constraints.rhs) + float(minima.sum())
    return bound if np.isfinite(bound) else -np.inf
