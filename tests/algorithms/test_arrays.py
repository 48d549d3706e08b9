"""Kernel inputs: rows padded to a fixed width, and difference rows, hold the same matrix and
give the same constraint values."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.problems import random_problem
from worker.algorithms.run import arrays
from worker.algorithms.run.arrays import PAD_SLACK, _difference_rows, _padded_rows, problem_arrays
from worker.kernels.constraints import constraint_values, group_maximum, group_value


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


@settings(max_examples=50, deadline=None)
@given(sparse_matrices(), st.integers(1, 7))
def test_rows_padded_in_blocks_are_the_rows_padded_at_once(matrix, block):
    whole = _padded_rows(matrix)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(arrays, "PAD_ROWS", block)
        blocked = _padded_rows(matrix)
    assert blocked[3] == whole[3]
    for part, expected in zip(blocked[:3], whole[:3], strict=True):
        np.testing.assert_array_equal(part, expected)
        assert part.dtype == expected.dtype


def test_ordering_rows_are_pairs():
    ordering = sp.csr_matrix(np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]]))
    indptr, indices, data, width = _padded_rows(ordering)
    assert width == 2
    np.testing.assert_array_equal(indices, [0, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(data, [1.0, -1.0, 1.0, -1.0, 1.0, 0.0])


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.integers(2, 9), st.integers(0, 2**32 - 1))
def test_difference_rows_hold_the_same_matrix_with_the_positive_entry_first(rows, cols, seed):
    rng = np.random.default_rng(seed)
    scale = rng.uniform(0.1, 2.0)
    dense = np.zeros((rows, cols))
    for i in range(rows):
        a, b = rng.choice(cols, 2, replace=False)
        dense[i, a], dense[i, b] = scale, -scale
    matrix = sp.csr_matrix(dense)
    indptr, indices, data, width = _padded_rows(matrix)
    oriented, coefficients, found = _difference_rows(indices, data, width)
    assert found == scale
    np.testing.assert_array_equal(coefficients[0::2], scale)
    np.testing.assert_array_equal(coefficients[1::2], -scale)
    rebuilt = sp.csr_matrix((coefficients, oriented, indptr), shape=matrix.shape)
    np.testing.assert_array_equal(rebuilt.toarray(), dense)


@pytest.mark.parametrize("rows", [
    [[1.0, -1.0, 0.0], [0.0, 2.0, -2.0]],        # two scales
    [[1.0, -1.0, 0.0], [0.0, 1.0, 1.0]],         # a sum, not a difference
    [[1.0, -1.0, 0.0], [0.0, 0.0, 1.0]],         # a padded one-entry row
    [[1.0, -1.0, 0.5], [0.0, 1.0, -1.0]],        # three entries
])
def test_other_rows_are_left_as_they_are(rows):
    matrix = sp.csr_matrix(np.array(rows))
    _, indices, data, width = _padded_rows(matrix)
    oriented, coefficients, scale = _difference_rows(indices, data, width)
    assert scale == 0.0
    assert oriented is indices and coefficients is data


@pytest.mark.parametrize("constraint", ["ordering", "lattice", "linear"])
def test_every_layout_gives_the_same_constraint_values(constraint):
    problem = random_problem("hinge", constraint, d=8)
    arrays = problem_arrays(problem, 3)
    assert (arrays.a_scale > 0) == (constraint != "linear")
    w = np.random.default_rng(0).normal(size=problem.d)
    expected = problem.constraints.matrix @ w - problem.constraints.rhs
    for layout in (arrays, arrays._replace(a_scale=0.0),
                   arrays._replace(a_scale=0.0, a_width=0)):
        values = np.empty(problem.m)
        constraint_values(layout, w, values)
        np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)
        for group in range(layout.group_ptr.size - 1):
            rows = slice(layout.group_ptr[group], layout.group_ptr[group + 1])
            best, at = group_value(layout, group, w)
            assert best == pytest.approx(expected[rows].max(), abs=1e-12)
            assert expected[at] == pytest.approx(best, abs=1e-12)
            assert group_maximum(layout, group, w) == best
