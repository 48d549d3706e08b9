"""Logistic loss log(1 + exp(-y s)) on class labels, evaluated without overflow."""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import expit

from worker.losses.label_rules import CLASSES
from worker.losses.record import ConicForm, Loss

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


def reference_value(score: np.ndarray, label: np.ndarray) -> np.ndarray:
    """log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)) for z = -y s, elementwise: the same
    values as ``np.logaddexp(0, z)`` in less time, which counts because L-BFGS-B evaluates it
    every step (measured: docs/benchmarks.md#fixed-costs-measured)."""
    z = -label * score
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


def exact_reference(scores, labels):
    """The mean logistic loss in CVXPY (a dev dependency, imported here)."""
    import cvxpy as cp

    return cp.sum(cp.logistic(-cp.multiply(labels, scores))) / labels.size


LOSS = Loss("logistic", CODE, "log(1 + exp(-y s))", CLASSES, value, slope,
            reference_value=reference_value,
            reference_slope=lambda s, y: -y * expit(-y * s),  # no overflow at large |s|
            exact_reference=exact_reference, smooth=True,
            conic=ConicForm("worker.algorithms.exact.loss_forms:LOGISTIC", exponential=True))
