"""The objective without its regularizer, L(w), its value and (sub)gradient in plain numpy.

f(w) = L(w) + l1 ||w||_1 + (l2/2) ||w||^2 with L(w) = (1/n) sum_i c_i loss(x_i . w, y_i)
(c the example weights of mean 1, :attr:`~worker.problem.compiled.Objective.weights`), or
L(w) = (1/2) w'Qw + c'w for a quadratic objective (:class:`~worker.problem.compiled.Objective`). The
exact and quasi-Newton methods (:mod:`worker.algorithms.runners.lbfgsb`, :mod:`.dual_bound`) work
on whole arrays,
so they use the losses' numpy references (:class:`~worker.losses.Loss`), not the kernels.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.losses import BY_CODE, QUADRATIC
from worker.problem.compiled import Objective


def loss_value_and_gradient(objective: Objective, w: np.ndarray,
                            rows: np.ndarray | sp.csr_matrix | None = None
                            ) -> tuple[float, np.ndarray]:
    """L(w) and a (sub)gradient of it.

    Parameters
    ----------
    objective : Objective
        Features X (n, d) and labels (n,), or Q (d, d) and c (d,).
    w : ndarray, shape (d,)
    rows : ndarray or csr_matrix, shape (n, d), optional
        X as :func:`~worker.problem.csr.for_products` holds it (default: ``objective.features``).

    Returns
    -------
    value : float
    gradient : ndarray, shape (d,)
        The gradient; for the hinge, the subgradient the loss's ``slope`` gives.
    """
    if objective.kind == QUADRATIC:
        product = objective.quadratic @ w
        return float(0.5 * w @ product + objective.linear @ w), product + objective.linear
    loss = BY_CODE[objective.kind]
    rows = objective.features if rows is None else rows
    scores = rows @ w
    n = max(objective.n, 1)
    weights = objective.example_weights()
    value = float(weights @ loss.reference_value(scores, objective.labels)) / n
    slopes = weights * loss.reference_slope(scores, objective.labels)
    return value, np.asarray(rows.T @ slopes).ravel() / n


def objective_value(objective: Objective, w: np.ndarray) -> float:
    """f(w) = L(w) + l1 ||w||_1 + (l2/2) ||w||^2 for w of shape (d,)."""
    value, _ = loss_value_and_gradient(objective, w)
    return value + regularizer(objective, w)


def regularizer(objective: Objective, w: np.ndarray) -> float:
    """l1 ||w||_1 + (l2/2) ||w||^2 for w of shape (d,)."""
    return objective.l1 * float(np.abs(w).sum()) + 0.5 * objective.l2 * float(w @ w)
