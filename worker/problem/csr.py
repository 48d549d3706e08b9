"""One CSR form for every matrix a spec gives: float64, duplicates summed, indices sorted."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def as_csr(matrix) -> sp.csr_matrix:
    """``matrix`` (dense array or any scipy sparse, shape (r, c)) as canonical float64 CSR."""
    csr = sp.csr_matrix(matrix, dtype=np.float64)
    csr.sum_duplicates()
    csr.sort_indices()
    return csr
