"""Calibration and simplex interpolation of raw table columns (:mod:`worker.tables`).

Two allocation-free kernels over plain arrays:

* :func:`pwl_segments`: where each value falls among increasing keypoints, as the segment
  index ``i`` and the position ``t`` in [0, 1] inside ``[k_i, k_(i+1)]`` (clamped at both
  ends, so a piecewise-linear function of the keypoints is constant beyond them).
* :func:`simplex_cells`: simplex (Kuhn / Freudenthal) interpolation of points of the box
  ``prod_j [0, s_j - 1]`` onto the vertices of a lattice of sizes ``s`` laid out in C order
  (Gupta et al. 2016, JMLR 17(109), §5.2; the LightTouch paper's §6 model with ``s_j = 2``).
"""

from __future__ import annotations

import numpy as np

from worker.kernels.jit import kernel


@kernel
def pwl_segments(values: np.ndarray, keypoints: np.ndarray, segment: np.ndarray,
                 position: np.ndarray) -> None:
    """Segment and position of every value among the keypoints, clamped at both ends.

    A piecewise-linear function with outputs ``theta`` at the keypoints is then
    ``(1 - t) theta_i + t theta_(i+1)``: constant ``theta_0`` below ``k_0`` (``i = 0``,
    ``t = 0``) and ``theta_(K-1)`` above ``k_(K-1)`` (``i = K - 2``, ``t = 1``).

    Parameters
    ----------
    values : ndarray of float64, shape (n,)
        Finite raw values.
    keypoints : ndarray of float64, shape (K,)
        Strictly increasing, K >= 2.
    segment : ndarray of int64, shape (n,)
        Output: ``i`` in 0..K-2.
    position : ndarray of float64, shape (n,)
        Output: ``t`` in [0, 1].
    """
    last = keypoints.shape[0] - 1
    for r in range(values.shape[0]):
        x = values[r]
        if x <= keypoints[0]:
            segment[r] = 0
            position[r] = 0.0
        elif x >= keypoints[last]:
            segment[r] = last - 1
            position[r] = 1.0
        else:
            low, high = 0, last          # keypoints[low] < x < keypoints[high]
            while high - low > 1:
                middle = (low + high) // 2
                if keypoints[middle] <= x:
                    low = middle
                else:
                    high = middle
            segment[r] = low
            position[r] = (x - keypoints[low]) / (keypoints[low + 1] - keypoints[low])


@kernel
def simplex_cells(points: np.ndarray, sizes: np.ndarray, strides: np.ndarray,
                  fractions: np.ndarray, order: np.ndarray, vertices: np.ndarray,
                  weights: np.ndarray) -> None:
    """Simplex interpolation weights of points on a lattice of sizes ``s`` (C order).

    A point ``u`` lies in the cell with base corner ``b_j = min(floor(u_j), s_j - 2)``;
    with ``f = u - b`` sorted descending, ``f_(pi_1) >= ... >= f_(pi_D)`` (ties keep the
    lower axis first), it is the convex combination of the vertices ``v_0 = b``,
    ``v_k = v_(k-1) + e_(pi_k)`` with weights ``1 - f_(pi_1)``, ``f_(pi_k) - f_(pi_(k+1))``
    and ``f_(pi_D)``. For ``s_j = 2`` this is
    :func:`worker.datasets.simplex.simplex_interpolation`.

    Parameters
    ----------
    points : ndarray of float64, shape (n, D)
        Points with ``0 <= u_j <= s_j - 1``.
    sizes : ndarray of int64, shape (D,)
        Lattice sizes, each >= 2.
    strides : ndarray of int64, shape (D,)
        C-order strides, ``prod(sizes[j+1:])``.
    fractions : ndarray of float64, shape (D,)
        Scratch space.
    order : ndarray of int64, shape (D,)
        Scratch space.
    vertices : ndarray of int32, shape (n, D + 1)
        Output: flat vertex indices of each point's simplex, strictly increasing.
    weights : ndarray of float64, shape (n, D + 1)
        Output: the barycentric weights, nonnegative, summing to 1 (up to rounding).
    """
    dims = points.shape[1]
    for r in range(points.shape[0]):
        base = 0
        for j in range(dims):          # insertion sort of f descending, stable
            cell = min(np.floor(points[r, j]), sizes[j] - 2.0)
            base += int(cell) * strides[j]
            fractions[j] = points[r, j] - cell
            k = j
            while k > 0 and fractions[order[k - 1]] < fractions[j]:
                order[k] = order[k - 1]
                k -= 1
            order[k] = j
        vertex = base
        vertices[r, 0] = vertex
        previous = 1.0
        for k in range(dims):
            axis = order[k]
            weights[r, k] = previous - fractions[axis]
            previous = fractions[axis]
            vertex += strides[axis]
            vertices[r, k + 1] = vertex
        weights[r, dims] = previous
