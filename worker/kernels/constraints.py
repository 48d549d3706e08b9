"""Constraint values g_i(w) = a_i . w - b_i over unit-norm CSR rows, and aggregated groups.

A *group* (LightTouch paper §5.1) is g~_G(w) = max_{i in G} g_i(w); without aggregation every
group holds one constraint. Checking a group of s constraints costs s constraint checks.
"""

from __future__ import annotations

import numpy as np

from worker.kernels.jit import kernel
from worker.kernels.objective import row_dot


@kernel(inline="always")
def constraint_value(p, i, w):
    """g_i(w) for constraint i.

    Ordering and lattice rows (two entries each, ``p.a_width == 2``) are read at 2i and
    2i + 1 without the CSR row pointers: a group's maximum then costs about 3 ns per
    constraint instead of 5 (``bench/iteration_bench.py``).
    """
    if p.a_width == 2:
        k = 2 * i
        return (p.a_data[k] * w[p.a_indices[k]] + p.a_data[k + 1] * w[p.a_indices[k + 1]]
                - p.rhs[i])
    return row_dot(p.a_indptr, p.a_indices, p.a_data, i, w) - p.rhs[i]


@kernel(inline="always")
def group_value(p, group, w):
    """(max_{i in group} g_i(w), argmax i) for one aggregated group."""
    best = -np.inf
    best_i = -1
    for i in range(p.group_ptr[group], p.group_ptr[group + 1]):
        value = constraint_value(p, i, w)
        if value > best:
            best = value
            best_i = i
    return best, best_i


@kernel
def constraint_values(p, w, out):
    """Write g_i(w) for every i into ``out`` (shape (m,))."""
    for i in range(out.shape[0]):
        out[i] = constraint_value(p, i, w)


@kernel
def max_violation(p, w):
    """max(0, max_i g_i(w)) together with the box violation of w."""
    worst = 0.0
    for i in range(p.rhs.shape[0]):
        worst = max(worst, constraint_value(p, i, w))
    for j in range(w.shape[0]):
        worst = max(worst, p.lower[j] - w[j], w[j] - p.upper[j])
    return worst
