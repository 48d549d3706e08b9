"""Squared loss (s - y)^2 / 2 on real targets (least squares)."""

from __future__ import annotations

from numba import njit

from worker.losses.label_rules import TARGETS
from worker.losses.record import Loss

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


LOSS = Loss("squared", CODE, "(s - y)^2 / 2", TARGETS, value, slope,
            reference_value=lambda s, y: 0.5 * (s - y) ** 2,
            reference_slope=lambda s, y: s - y)
