"""Squared loss (s - y)^2 / 2 on real targets (least squares)."""

from __future__ import annotations

from numba import njit

from worker.losses.label_rules import TARGETS
from worker.losses.record import ConicForm, Loss

#: The integer the kernels switch on.
CODE = 2


@njit(cache=True, inline="always")
def value(score, label):
    """(s - y)^2 / 2."""
    return 0.5 * (score - label) ** 2


@njit(cache=True, inline="always")
def slope(score, label):
    """s - y."""
    return score - label


def exact_reference(scores, labels):
    """The mean squared loss in CVXPY (a dev dependency, imported here)."""
    import cvxpy as cp

    return 0.5 * cp.sum_squares(scores - labels) / labels.size


LOSS = Loss("squared", CODE, "(s - y)^2 / 2", TARGETS, value, slope,
            reference_value=lambda s, y: 0.5 * (s - y) ** 2,
            reference_slope=lambda s, y: s - y,
            exact_reference=exact_reference, smooth=True,
            conic=ConicForm("worker.algorithms.exact.loss_forms:SQUARED", gram=True))
