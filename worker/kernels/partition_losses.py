"""Kernels on one data partition besides the batch gradient (:mod:`worker.kernels.svrg`):
the serial phase's examples of a round, and loss sums for objective values.

SVRG OL's serial phase (Cutkosky & Busa-Fekete, Algorithm 1 lines 7-11) draws about T_k k_f
examples in round k. When the driver does not hold the data, every partition returns the
rows selected by the same counter-based hash as the batch (:func:`row_uniform`) under a key
of its own, so the selection depends only on (seed, round, global row).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from worker.kernels.objective import loss_value, row_dot
from worker.kernels.svrg import row_uniform


@njit(cache=True)
def selected_rows(rows, key, fraction, forced):
    """Local indices of the rows with uniform(key, global row) < fraction, plus the global
    row ``forced`` when it falls in this partition (so a round never has no example).

    Parameters
    ----------
    rows : Rows
    key : uint64
    fraction : float
        Selection probability; >= 1 takes every row.
    forced : int
        A global row always selected.

    Returns
    -------
    ndarray of int64, shape (selected,)
    """
    n = rows.labels.shape[0]
    out = np.empty(n, dtype=np.int64)
    count = 0
    for r in range(n):
        if fraction >= 1.0 or rows.first_row + r == forced \
                or row_uniform(key, rows.first_row + r) < fraction:
            out[count] = r
            count += 1
    return out[:count]


@njit(cache=True)
def loss_sums(rows, points, out):
    """Add sum_i c_i loss(x_i . w_k, y_i) over the partition's rows (c: ``rows.weights``)
    to out[k], for every point.

    Parameters
    ----------
    rows : Rows
    points : ndarray, shape (K, d)
    out : ndarray, shape (K,)
        Accumulator (not cleared).
    """
    for r in range(rows.labels.shape[0]):
        for k in range(points.shape[0]):
            score = row_dot(rows.indptr, rows.indices, rows.data, r, points[k])
            out[k] += rows.weights[r] * loss_value(rows.kind, score, rows.labels[r])
