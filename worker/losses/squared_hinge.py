"""Squared hinge loss max(0, 1 - y s)^2 on class labels: smooth, with the hinge's margin."""

from __future__ import annotations

import numpy as np
from numba import njit

from worker.losses.label_rules import CLASSES
from worker.losses.record import ConicForm, Loss

#: The integer the kernels switch on.
CODE = 4


@njit(cache=True, inline="always")
def value(score, label):
    """max(0, 1 - y s)^2."""
    return max(0.0, 1.0 - label * score) ** 2


@njit(cache=True, inline="always")
def slope(score, label):
    """-2 y max(0, 1 - y s)."""
    return -2.0 * label * max(0.0, 1.0 - label * score)


def exact_reference(scores, labels):
    """The mean squared hinge loss in CVXPY (a dev dependency, imported here)."""
    import cvxpy as cp

    return cp.sum_squares(cp.pos(1 - cp.multiply(labels, scores))) / labels.size


LOSS = Loss("squared_hinge", CODE, "max(0, 1 - y s)^2", CLASSES, value, slope,
            reference_value=lambda s, y: np.maximum(0.0, 1.0 - y * s) ** 2,
            reference_slope=lambda s, y: -2.0 * y * np.maximum(0.0, 1.0 - y * s),
            exact_reference=exact_reference, smooth=True,
            conic=ConicForm("worker.algorithms.exact.loss_forms:SQUARED_HINGE"))
