"""The one canonical CSR form of every sparse matrix the engine holds, and its kernel arrays.

Canonical: float64 values, duplicates summed and indices sorted within each row (optionally
no stored zeros); the kernels take (indptr, indices, data) as int64, int64, float64.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: A matrix is held dense when at least this share of its entries is non-zero.
DENSE_MIN_DENSITY = 0.5


def as_csr(matrix, *, drop_zeros: bool = False) -> sp.csr_matrix:
    """``matrix`` (dense array or any scipy sparse, shape (r, c)) as canonical float64 CSR;
    ``drop_zeros`` also removes stored zeros. Values beyond float64 become infinite (the
    callers that read untrusted data report them)."""
    if isinstance(matrix, np.ndarray) and matrix.ndim == 2:
        return _dense_as_csr(matrix)
    with np.errstate(over="ignore", invalid="ignore"):
        csr = sp.csr_matrix(matrix, dtype=np.float64)
    csr.sum_duplicates()
    csr.sort_indices()
    if drop_zeros:
        csr.eliminate_zeros()
    return csr


def _dense_as_csr(matrix: np.ndarray) -> sp.csr_matrix:
    """A dense (r, c) array's nonzeros as canonical CSR, built from its row-major nonzero
    mask: faster than scipy's route through COO, which a dense table would pay on every solve
    (measured: docs/benchmarks.md#fixed-costs-measured)."""
    with np.errstate(over="ignore", invalid="ignore"):
        dense = np.asarray(matrix, dtype=np.float64)
    nonzero = dense != 0
    indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
    np.cumsum(nonzero.sum(axis=1), out=indptr[1:])
    csr = sp.csr_matrix((dense[nonzero], np.nonzero(nonzero)[1], indptr), shape=dense.shape)
    csr.has_canonical_format = True        # row-major order: sorted, no duplicates
    return csr


def for_products(matrix: sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
    """A CSR matrix (r, c) as held for many products M x and M' y: dense when at least
    :data:`DENSE_MIN_DENSITY` of its entries are non-zero (a BLAS product is then faster than
    CSR's, and the copy takes at most 16 bytes a non-zero; measured:
    docs/benchmarks.md#fixed-costs-measured), else ``matrix`` itself."""
    cells = matrix.shape[0] * matrix.shape[1]
    return matrix.toarray() if cells and matrix.nnz >= DENSE_MIN_DENSITY * cells else matrix


def kernel_parts(matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr (r + 1,), indices (nnz,), data (nnz,)) of ``matrix`` in canonical form, as the
    kernels take them: int64, int64, C-contiguous float64."""
    csr = as_csr(matrix)
    return (csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
            np.ascontiguousarray(csr.data, dtype=np.float64))
