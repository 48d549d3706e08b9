"""Kernel inputs: rows padded to a fixed width hold the same matrix and touch the same columns."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.algorithms.arrays import PAD_SLACK, _padded_rows


@st.composite
def sparse_matrices(draw):
    """CSR matrices with 0 to 40 rows of 0 to 6 entries each (some rows empty)."""
    rows, cols = draw(st.integers(0, 40)), draw(st.integers(1, 12))
    counts = draw(st.lists(st.integers(0, min(6, cols)), min_size=rows, max_size=rows))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = np.zeros((rows, cols))
    for i, count in enumerate(counts):
        dense[i, rng.choice(cols, count, replace=False)] = rng.uniform(0.5, 2.0, count)
    return sp.csr_matrix(dense)


@settings(max_examples=200, deadline=None)
@given(sparse_matrices())
def test_padded_rows_hold_the_same_matrix_and_columns(matrix):
    indptr, indices, data, width = _padded_rows(matrix)
    rebuilt = sp.csr_matrix((data, indices, indptr), shape=matrix.shape)
    np.testing.assert_array_equal(rebuilt.toarray(), matrix.toarray())
    counts = np.diff(matrix.indptr)
    if width:
        assert width == counts.max()
        assert width <= 2 or width * counts.size <= PAD_SLACK * matrix.nnz
        np.testing.assert_array_equal(indptr, width * np.arange(counts.size + 1))
        for i in range(counts.size):            # padding repeats a column of the row
            row = set(indices[i * width:(i + 1) * width])
            assert row == (set(matrix[i].indices) or {0})
    else:
        assert counts.size == 0 or counts.max() == 0 or (
            counts.max() > 2 and counts.max() * counts.size > PAD_SLACK * matrix.nnz)
        np.testing.assert_array_equal(indptr, matrix.indptr)


def test_ordering_rows_are_pairs():
    ordering = sp.csr_matrix(np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]]))
    indptr, indices, data, width = _padded_rows(ordering)
    assert width == 2
    np.testing.assert_array_equal(indices, [0, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(data, [1.0, -1.0, 1.0, -1.0, 1.0, 0.0])
