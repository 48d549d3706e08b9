"""Constraint values g_i(w) = a_i . w - b_i over unit-norm CSR rows, and aggregated groups.

A *group* (LightTouch paper §5.1) is g~_G(w) = max_{i in G} g_i(w); without aggregation every
group holds one constraint. Checking a group of s constraints costs s constraint checks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from worker.kernels.objective import row_dot


@njit(cache=True, inline="always")
def constraint_value(p, i, w):
    """g_i(w) for constraint i."""
    return row_dot(p.a_indptr, p.a_indices, p.a_data, i, w) - p.rhs[i]


@njit(cache=True, inline="always")
def group_value(p, group, w):
    """(max_{i in group} g_i(w), argmax i) for one aggregated group."""
    best = -np.inf
    best_i = -1
    for k in range(p.group_ptr[group], p.group_ptr[group + 1]):
        i = p.group_members[k]
        value = constraint_value(p, i, w)
        if value > best:
            best = value
            best_i = i
    return best, best_i


@njit(cache=True)
def constraint_values(p, w, out):
    """Write g_i(w) for every i into ``out`` (shape (m,))."""
    for i in range(out.shape[0]):
        out[i] = constraint_value(p, i, w)


@njit(cache=True)
def max_violation(p, w):
    """max(0, max_i g_i(w)) together with the box violation of w."""
    worst = 0.0
    for i in range(p.rhs.shape[0]):
        worst = max(worst, constraint_value(p, i, w))
    for j in range(w.shape[0]):
        worst = max(worst, p.lower[j] - w[j], w[j] - p.upper[j])
    return worst
