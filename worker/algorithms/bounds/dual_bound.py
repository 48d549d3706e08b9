"""A certified lower bound on the optimum from any point and any multipliers (weak duality):
the exact and quasi-Newton methods' certificate, from their solver's multipliers.

For the problem min f(w) over the box lower <= w <= upper subject to A w <= b, with
f(w) = L(w) + l1 ||w||_1 + (l2/2) ||w||^2 and L convex, every linear minorant
L(w) >= const + g . w and every y >= 0 give

    LB = const - y . b + sum_j min_{lower_j <= t <= upper_j} [(g + A'y)_j t + l1 |t| + (l2/2) t^2]
       <= min { f(w) : A w <= b, w in the box },

since f(w) + y . (A w - b) <= f(w) on the feasible set and the right-hand minimum separates
by coordinate (the Lagrangian dual function of the problem with L replaced by its minorant;
each coordinate's minimum comes from :func:`~worker.algorithms.bounds.certificate.box_minimum`).
The minorant is L's tangent at a point w_hat (const = L(w_hat) - g . w_hat, g = grad L(w_hat)),
or, for the hinge, (1/n) sum_i c_i alpha_i (1 - y_i x_i . w) for any alpha in [0, 1]^n (c the
example weights of mean 1; the hinge is the maximum of these over alpha). At a solver's
answer and its multipliers the bound is the optimum up to the solver's tolerance; it is
valid for any input, so it certifies the answer's gap even when the solver stopped early.
A coordinate whose minimum is -inf (an infinite side of the box, l2 = 0 and a slope beyond
l1) makes the bound -inf (no certificate).
"""

from __future__ import annotations

import numpy as np

from worker.algorithms.bounds.certificate import box_minimum
from worker.algorithms.bounds.smooth_part import loss_value_and_gradient
from worker.losses import is_piecewise_linear
from worker.problem.compiled import CompiledProblem


def lagrangian_bound(problem: CompiledProblem, point: np.ndarray, multipliers: np.ndarray,
                     hinge_weights: np.ndarray | None = None,
                     tangent: tuple[float, np.ndarray] | None = None) -> float:
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
    tangent : (float, ndarray of shape (d,)), optional
        L(point) and its gradient, when the caller has them (else computed here).

    Returns
    -------
    float
        The bound, or -inf when it is not finite.
    """
    objective = problem.objective
    if is_piecewise_linear(objective.kind) and hinge_weights is not None:
        alpha = np.clip(hinge_weights, 0.0, 1.0) * objective.example_weights()
        n = objective.n
        signed = objective.features.multiply(objective.labels[:, None])
        slope = -np.asarray(signed.T @ alpha).ravel() / n
        constant = float(alpha.sum()) / n
    else:
        value, slope = loss_value_and_gradient(objective, point) if tangent is None \
            else tangent
        constant = value - float(slope @ point)
    return minorant_bound(problem, constant, slope, np.maximum(multipliers, 0.0))


def minorant_bound(problem: CompiledProblem, constant: float, slope: np.ndarray,
                   multipliers: np.ndarray) -> float:
    """LB of the module docstring for a linear minorant L(w) >= constant + slope . w.

    Parameters
    ----------
    problem : CompiledProblem
        l1, l2, constraints A (m, d) and b (m,), box (d,); its rows are not read.
    constant : float
    slope : ndarray, shape (d,)
    multipliers : ndarray, shape (m,)
        y >= 0.

    Returns
    -------
    float
        The bound, or -inf when it is not finite.
    """
    objective, constraints = problem.objective, problem.constraints
    slope = slope + np.asarray(constraints.matrix.T @ multipliers).ravel()
    minima = coordinate_minima(slope, objective.l1, objective.l2, problem.lower, problem.upper)
    bound = constant - float(multipliers @ constraints.rhs) + float(minima.sum())
    return bound if np.isfinite(bound) else -np.inf


def coordinate_minima(slope: np.ndarray, l1: float, l2: float, lower: np.ndarray,
                       upper: np.ndarray) -> np.ndarray:
    """min over lower_j <= t <= upper_j of slope_j t + l1 |t| + (l2/2) t^2, shape (d,) (-inf
    where unbounded below): :func:`~worker.algorithms.bounds.certificate.box_minimum` from the box's
    point v nearest 0, plus the function's value there."""
    v = np.clip(0.0, lower, upper)
    at_v = slope * v + l1 * np.abs(v) + 0.5 * l2 * v * v
    return at_v + box_minimum(v, slope + l2 * v, l2, l1, lower, upper)
