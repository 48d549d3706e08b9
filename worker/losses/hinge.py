"""Hinge loss max(0, 1 - y s) on class labels (LightTouch paper §6, the pairwise ranking loss)."""

from __future__ import annotations

import numpy as np
from numba import njit

from worker.losses.label_rules import CLASSES
from worker.losses.record import ConicForm, Loss

#: The integer the kernels switch on.
CODE = 0


@njit(cache=True, inline="always")
def value(score, label):
    """max(0, 1 - y s)."""
    return max(0.0, 1.0 - label * score)


@njit(cache=True, inline="always")
def slope(score, label):
    """-y where y s < 1, else 0."""
    return -label if label * score < 1.0 else 0.0


def exact_reference(scores, labels):
    """The mean hinge loss in CVXPY (a dev dependency, imported here)."""
    import cvxpy as cp

    return cp.sum(cp.pos(1 - cp.multiply(labels, scores))) / labels.size


LOSS = Loss("hinge", CODE, "max(0, 1 - y s)", CLASSES, value, slope,
            reference_value=lambda s, y: np.maximum(0.0, 1.0 - y * s),
            reference_slope=lambda s, y: np.where(y * s < 1.0, -y, 0.0),
            exact_reference=exact_reference, smooth=False, piecewise_linear=True,
            conic=ConicForm("worker.algorithms.exact.loss_forms:HINGE"))
