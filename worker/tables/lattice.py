"""The fixed input map of a calibrated lattice and simplex interpolation onto its vertices.

Input j's calibrator takes its K_j keypoints, in order, to the evenly spaced lattice
coordinates ``0, (s_j - 1)/(K_j - 1), ..., s_j - 1`` (constant outside the keypoints); the
point ``u`` so obtained is interpolated onto the vertices of its simplex in the Freudenthal
triangulation of the lattice (:func:`worker.kernels.calibration.simplex_cells`). Vertices are
flattened in C order over ``sizes`` (``numpy.ravel_multi_index``), as the
``monotone_lattice`` constraint lays them out. With 12 inputs of size 2 and keypoints
``[0, 1]`` this is the LightTouch paper's §6 model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from worker.kernels.calibration import simplex_cells
from worker.tables.calibrators import NumericCalibrator
from worker.tables.columns import Table


def lattice_strides(sizes: Sequence[int]) -> np.ndarray:
    """C-order stride of each axis, ``prod(sizes[j+1:])``, int64 (D,)."""
    strides = np.ones(len(sizes), dtype=np.int64)
    for j in range(len(sizes) - 2, -1, -1):
        strides[j] = strides[j + 1] * sizes[j + 1]
    return strides


def lattice_points(calibrators: Sequence[NumericCalibrator], sizes: Sequence[int],
                   table: Table) -> np.ndarray:
    """Each row's lattice coordinates ``u``, float64 (n, D), ``0 <= u_j <= s_j - 1``."""
    points = np.empty((table.rows, len(sizes)), dtype=np.float64)
    for j, (calibrator, size) in enumerate(zip(calibrators, sizes, strict=True)):
        segment, position = calibrator.segments(table)
        step = (size - 1) / (calibrator.size - 1)
        np.multiply(segment + position, step, out=points[:, j])
        np.minimum(points[:, j], size - 1, out=points[:, j])
    return points


def simplex_matrix(points: np.ndarray, sizes: Sequence[int]) -> sp.csr_matrix:
    """Simplex interpolation weights of lattice points.

    Parameters
    ----------
    points : ndarray of float64, shape (n, D)
        Lattice coordinates, ``0 <= u_j <= s_j - 1``.
    sizes : sequence of int, length D
        Lattice sizes, each >= 2.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, prod(sizes))
        D + 1 entries a row, column indices strictly increasing; exact zeros are kept so
        every row has the same entries (as :mod:`worker.datasets.simplex` does).
    """
    n, dims = points.shape
    vertices = np.empty((n, dims + 1), dtype=np.int32)
    weights = np.empty((n, dims + 1), dtype=np.float64)
    simplex_cells(np.ascontiguousarray(points), np.asarray(sizes, dtype=np.int64),
                  lattice_strides(sizes), np.empty(dims), np.empty(dims, dtype=np.int64),
                  vertices, weights)
    indptr = np.arange(0, n * (dims + 1) + 1, dims + 1, dtype=np.int64)
    matrix = sp.csr_matrix((weights.ravel(), vertices.ravel(), indptr),
                           shape=(n, math.prod(sizes)), copy=False)
    matrix.has_sorted_indices = True
    return matrix
