"""The one canonical CSR form of every sparse matrix the engine holds, and its kernel arrays.

Canonical: float64 values, duplicates summed and indices sorted within each row (optionally
no stored zeros); the kernels take (indptr, indices, data) as int64, int64, float64.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def as_csr(matrix, *, drop_zeros: bool = False) -> sp.csr_matrix:
    """``matrix`` (dense array or any scipy sparse, shape (r, c)) as canonical float64 CSR;
    ``drop_zeros`` also removes stored zeros. Values beyond float64 become infinite (the
    callers that read untrusted data report them)."""
    with np.errstate(over="ignore", invalid="ignore"):
        csr = sp.csr_matrix(matrix, dtype=np.float64)
    csr.sum_duplicates()
    csr.sort_indices()
    if drop_zeros:
        csr.eliminate_zeros()
    return csr


def kernel_parts(matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr (r + 1,), indices (nnz,), data (nnz,)) of ``matrix`` in canonical form, as the
    kernels take them: int64, int64, C-contiguous float64."""
    csr = as_csr(matrix)
    return (csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
            np.ascontiguousarray(csr.data, dtype=np.float64))
