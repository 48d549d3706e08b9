"""Logistic loss log(1 + exp(-y s)) on class labels, evaluated without overflow."""

from __future__ import annotations

import numpy as np
from numba import njit

from worker.losses.label_rules import CLASSES
from worker.losses.record import Loss

#: The integer the kernels switch on.
CODE = 1


@njit(cache=True, inline="always")
def value(score, label):
    """log(1 + exp(-y s)) = z + log1p(exp(-z)) for z = -y s > 0."""
    z = -label * score
    return z + np.log1p(np.exp(-z)) if z > 0 else np.log1p(np.exp(z))


@njit(cache=True, inline="always")
def slope(score, label):
    """-y / (1 + exp(y s))."""
    z = label * score
    if z >= 0:
        e = np.exp(-z)
        return -label * e / (1.0 + e)
    return -label / (1.0 + np.exp(z))


LOSS = Loss("logistic", CODE, "log(1 + exp(-y s))", CLASSES, value, slope,
            reference_value=lambda s, y: np.logaddexp(0.0, -y * s),
            reference_slope=lambda s, y: -y / (1.0 + np.exp(y * s)))
