"""Scoring candidates on every constraint: the kernel's pass and the CSR's blocks of rows
give the same violated columns and values, to the bit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import worker.candidates.scores as scores
from tests.problems import random_problem
from worker.algorithms.run.arrays import problem_arrays
from worker.problem.compiled import ConstraintSet


def wide_rows(m: int, d: int, seed: int) -> ConstraintSet:
    """m unit rows of 1 to d entries, feasible near 0."""
    rng = np.random.default_rng(seed)
    a = sp.random(m, d, density=0.4, random_state=seed, format="csr")
    a = sp.csr_matrix(a + sp.csr_matrix((np.ones(m), (np.arange(m), rng.integers(0, d, m))),
                                        shape=(m, d)))
    a = sp.csr_matrix(sp.diags(1.0 / np.sqrt(a.multiply(a).sum(axis=1).A1)) @ a)
    a.sort_indices()
    return ConstraintSet(a, rng.uniform(0.0, 0.2, size=m))


@pytest.mark.parametrize("block", [scores.BLOCK_VALUES, 7 * 30 + 3])
def test_row_blocks_give_the_kernels_columns_and_values(monkeypatch, block):
    monkeypatch.setattr(scores, "BLOCK_VALUES", block)   # several uneven blocks
    constraints = wide_rows(500, 12, seed=1)
    problem = replace(random_problem("hinge", "none", d=12, seed=1), constraints=constraints)
    arrays = problem_arrays(problem, 1)
    solutions = np.random.default_rng(2).uniform(-0.1, 0.1, size=(30, 12))
    by_kernel = scores._violated_by_kernel(arrays, constraints, solutions)
    by_rows = scores._violated_by_rows(constraints, solutions)
    assert 0 < by_rows[0].size < constraints.m
    for kernel_part, rows_part in zip(by_kernel, by_rows, strict=True):
        np.testing.assert_array_equal(rows_part, kernel_part)
    assert by_rows[1].shape == (30, by_rows[0].size)


def test_no_rows_and_no_violations():
    solutions = np.zeros((4, 3))
    columns, violations, worst = scores._violated_by_rows(
        ConstraintSet(sp.csr_matrix((0, 3)), np.zeros(0)), solutions)
    assert columns.size == 0 and violations.shape == (4, 0) and not worst.any()
    columns, violations, worst = scores._violated_by_rows(wide_rows(20, 3, seed=0), solutions)
    assert columns.size == 0 and violations.shape == (4, 0) and not worst.any()
