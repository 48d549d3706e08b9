"""Constraint values g_i(w) = a_i . w - b_i over unit-norm CSR rows, and aggregated groups.

A *group* (LightTouch paper §5.1) is g~_G(w) = max_{i in G} g_i(w); without aggregation every
group holds one constraint. Checking a group of s constraints costs s constraint checks.

Three layouts of the rows (:func:`worker.algorithms.run.arrays.problem_arrays` picks one):

* **difference rows** (``p.a_scale > 0``): every row is a_scale (w_a - w_b), its positive
  entry first at 2i and its negative one at 2i + 1, as ordering, monotonicity and lattice
  constraints are after normalization; a check reads two indices, two coordinates and b_i,
  or no b_i when every b_i is 0 (``p.rhs_zero``: x - 0 is x, so the values are the same);
* **two-entry rows** (``p.a_width == 2``): entries 2i and 2i + 1 with their coefficients;
* **CSR rows** otherwise, through the row pointers.

``bench/iteration_bench.py`` measures what each saves per check.
"""

from __future__ import annotations

import numpy as np

from worker.kernels.jit import kernel
from worker.kernels.objective import row_dot


@kernel(inline="always")
def constraint_value(p, i, w):
    """g_i(w) for constraint i, read in the rows' layout (module docstring)."""
    if p.a_scale > 0:
        k = 2 * i
        value = p.a_scale * (w[p.a_indices[k]] - w[p.a_indices[k + 1]])
        return value if p.rhs_zero else value - p.rhs[i]
    if p.a_width == 2:
        k = 2 * i
        return (p.a_data[k] * w[p.a_indices[k]] + p.a_data[k + 1] * w[p.a_indices[k + 1]]
                - p.rhs[i])
    return row_dot(p.a_indptr, p.a_indices, p.a_data, i, w) - p.rhs[i]


@kernel(inline="always")
def _difference_entries(start, stop):
    """Entries 2 start .. 2 stop - 1 of difference rows start .. stop - 1, as unsigned
    integers: numba reads an array at an index that cannot be negative without its
    wraparound test."""
    return np.uint64(2 * start), np.uint64(2 * stop)


@kernel(inline="always")
def rows_value(p, start, stop, w):
    """(max_{start <= i < stop} g_i(w), the first i where it is reached; -inf, -1 when the
    range is empty); difference rows with every b_i = 0 in a loop of their own (no layout or
    b test per check)."""
    best = -np.inf
    if p.a_scale > 0 and p.rhs_zero:
        first, last = _difference_entries(start, stop)
        best_k = last
        for k in range(first, last, np.uint64(2)):
            value = p.a_scale * (w[p.a_indices[k]] - w[p.a_indices[k + np.uint64(1)]])
            if value > best:
                best = value
                best_k = k
        return best, -1 if best_k == last else np.int64(best_k // np.uint64(2))
    best_i = -1
    for i in range(start, stop):
        value = constraint_value(p, i, w)
        if value > best:
            best = value
            best_i = i
    return best, best_i


@kernel(inline="always")
def group_value(p, group, w):
    """(max_{i in group} g_i(w), argmax i) for one aggregated group."""
    return rows_value(p, p.group_ptr[group], p.group_ptr[group + 1], w)


@kernel(inline="always")
def group_maximum(p, group, w):
    """max_{i in group} g_i(w) alone: without the argmax's bookkeeping a check is about a
    fifth cheaper (the p-update needs only the value). On difference rows with every b_i = 0
    the scale multiplies the largest difference once (a positive scale keeps the order, and
    rounding is monotone, so the value is the same)."""
    best = -np.inf
    if p.a_scale > 0 and p.rhs_zero:
        first, last = _difference_entries(p.group_ptr[group], p.group_ptr[group + 1])
        for k in range(first, last, np.uint64(2)):
            best = max(best, w[p.a_indices[k]] - w[p.a_indices[k + np.uint64(1)]])
        return p.a_scale * best
    for i in range(p.group_ptr[group], p.group_ptr[group + 1]):
        best = max(best, constraint_value(p, i, w))
    return best


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
