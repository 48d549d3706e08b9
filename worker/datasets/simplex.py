"""Simplex interpolation onto the unit lattice {0, 1}^D (LightTouch paper §6).

A point x in [0, 1]^D lies in the simplex of the Freudenthal triangulation picked by the
order of its coordinates; its row Phi(x) holds the D + 1 barycentric weights on that
simplex's vertices, so Phi(x) . w interpolates the lattice values w linearly inside each
simplex. Vertices are flattened in C order over shape ``[2] * D``
(``numpy.ravel_multi_index``): the vertex ``(b_0, ..., b_{D-1})`` has index
``sum_k b_k * 2**(D-1-k)``, as the ``monotone_lattice`` constraint lays them out.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Largest D whose 2**D vertex indices fit the int32 column indices of the CSR output.
MAX_DIMS = 30


def lattice_strides(dims: int) -> np.ndarray:
    """Flat-index stride of each lattice axis, ``2**(D-1-k)`` (C order over ``[2]*D``).

    Parameters
    ----------
    dims : int
        Number of features D.

    Returns
    -------
    ndarray of int64, shape (D,)
    """
    return np.left_shift(np.int64(1), np.arange(dims - 1, -1, -1, dtype=np.int64))


def lattice_vertices(dims: int) -> np.ndarray:
    """0/1 coordinates of every lattice vertex, row ``v`` being the vertex of flat index ``v``.

    Parameters
    ----------
    dims : int
        Number of features D; the result has 2**D rows, so keep D small (8 MiB at D = 16).

    Returns
    -------
    ndarray of float64, shape (2**D, D)
    """
    flat = np.arange(2**dims, dtype=np.int64)[:, None]
    return ((flat // lattice_strides(dims)) % 2).astype(np.float64)


def _check_unit_cube(x: np.ndarray) -> np.ndarray:
    """Return ``x`` as a float64 (n, D) array, raising ValueError unless it lies in [0, 1]^D."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"x must have shape (n, D) with D >= 1, got {x.shape}")
    if x.shape[1] > MAX_DIMS:
        raise ValueError(f"D = {x.shape[1]} > {MAX_DIMS}: 2**D columns overflow int32 indices")
    if not np.all((x >= 0.0) & (x <= 1.0)):  # also rejects NaN
        raise ValueError("x must lie in [0, 1]^D (no NaN)")
    return x


def _simplex_weights(x_sorted: np.ndarray) -> np.ndarray:
    """Weights ``1 - x_(1), x_(1) - x_(2), ..., x_(D)`` of coordinates sorted descending.

    Parameters
    ----------
    x_sorted : ndarray, shape (n, D)
        Each row sorted in descending order.

    Returns
    -------
    ndarray of float64, shape (n, D + 1)
        Nonnegative, each row summing to 1 (up to rounding).
    """
    n, dims = x_sorted.shape
    weights = np.empty((n, dims + 1))
    weights[:, 0] = 1.0 - x_sorted[:, 0]
    np.subtract(x_sorted[:, :-1], x_sorted[:, 1:], out=weights[:, 1:dims])
    weights[:, dims] = x_sorted[:, -1]
    return weights


def _simplex_vertices(order: np.ndarray, dims: int) -> np.ndarray:
    """Flat indices of ``v_0 = 0, v_k = v_{k-1} + e_{pi_k}`` for each row's permutation.

    Each step adds a distinct positive stride, so every row is strictly increasing.

    Parameters
    ----------
    order : ndarray of int, shape (n, D)
        Row ``i`` lists the axes by decreasing ``x_i`` coordinate (the permutation pi).
    dims : int
        Number of features D.

    Returns
    -------
    ndarray of int32, shape (n, D + 1)
    """
    vertices = np.zeros((order.shape[0], dims + 1), dtype=np.int32)
    strides = lattice_strides(dims).astype(np.int32)
    np.cumsum(strides[order], axis=1, out=vertices[:, 1:])
    return vertices


def simplex_interpolation(x: np.ndarray) -> sp.csr_matrix:
    """Simplex (Kuhn / Lovász) interpolation weights of points on the 2^D unit lattice.

    Sorting the coordinates of a point descending, ``x_{pi_1} >= ... >= x_{pi_D}``, the
    point lies in the simplex with vertices ``v_0 = 0``, ``v_k = v_{k-1} + e_{pi_k}``, and
    ``x = sum_k lambda_k v_k`` with ``lambda_0 = 1 - x_{pi_1}``,
    ``lambda_k = x_{pi_k} - x_{pi_(k+1)}`` and ``lambda_D = x_{pi_D}`` (Gupta et al. 2016,
    as used in LightTouch paper §6). The weights are nonnegative, sum to 1 and reproduce
    every affine function of ``x`` exactly.

    Parameters
    ----------
    x : array_like, shape (n, D)
        Points in [0, 1]^D.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, 2**D), float64
        Row ``i`` is ``Phi(x_i)``: exactly D + 1 stored entries with strictly increasing
        column indices (vertex indices in C order, see the module docstring). Entries can
        be exactly 0 where coordinates tie or equal 0 or 1; they are kept so every row has
        the same D + 1 entries.

    Raises
    ------
    ValueError
        If ``x`` is not a 2-D array in [0, 1]^D.
    """
    x = _check_unit_cube(x)
    n, dims = x.shape
    order = np.argsort(-x, axis=1, kind="stable")
    weights = _simplex_weights(np.take_along_axis(x, order, axis=1))
    vertices = _simplex_vertices(order, dims)
    indptr = np.arange(0, n * (dims + 1) + 1, dims + 1, dtype=np.int64)
    matrix = sp.csr_matrix(
        (weights.ravel(), vertices.ravel(), indptr), shape=(n, 2**dims), copy=False
    )
    matrix.has_sorted_indices = True
    return matrix


# --------------------------------------------------------------------------- ground truth
