"""The rows a polish round keeps (worker.candidates.hinge_lp.may_bind): exactly those some
point of the box violates, checked against the box's vertices, and a trust-region LP on them
has the value of the LP on every row, at a feasible point."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.candidates.test_polish import feasible_start, later
from tests.problems import random_problem
from worker.candidates.hinge_lp import may_bind, piecewise_lp, signed_rows, solve_lp
from worker.candidates.polish import may_cross, trust_region_lp


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_row_is_kept_exactly_when_a_vertex_of_the_box_violates_it(seed):
    rng = np.random.default_rng(seed)
    d, m = 3, 12
    matrix = sp.random(m, d, density=0.6, random_state=rng, format="csr",
                       data_rvs=lambda k: rng.normal(size=k))
    lower = rng.normal(size=d) - 0.5
    upper = lower + rng.uniform(0.0, 1.0, size=d)
    rhs = rng.normal(size=m)
    vertices = np.array(list(itertools.product(*zip(lower, upper, strict=True))))  # (2^d, d)
    largest = (matrix @ vertices.T).max(axis=1)                            # a linear max
    np.testing.assert_array_equal(may_bind(matrix, rhs, lower, upper), largest > rhs)


def test_an_infinite_side_keeps_the_rows_that_touch_it():
    matrix = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, -1.0], [0.0, 1.0]]))
    lower, upper = np.array([0.0, -np.inf]), np.array([1.0, 0.0])
    rhs = np.array([5.0, 5.0, 5.0])
    np.testing.assert_array_equal(may_bind(matrix, rhs, lower, upper), [False, True, False])


@pytest.mark.parametrize("constraint", ["linear", "ordering", "lattice"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_trust_region_lp_on_the_rows_that_may_bind_is_the_lp_on_every_row(constraint, seed):
    problem = random_problem("hinge", constraint, d=8, n=200, seed=seed)
    w = feasible_start(problem, seed)
    signed = signed_rows(problem)
    reach, margins = signed.reach(), signed.margins(w)
    solved, status, radius, _ = trust_region_lp(problem, signed, reach, w, 20, later())
    kept = np.flatnonzero(may_cross(margins, reach, radius))
    lower = np.maximum(problem.lower, w - radius)
    upper = np.minimum(problem.upper, w + radius)
    every_row = piecewise_lp(problem, signed, margins, kept, lower, upper)
    full, full_status = solve_lp(every_row, 60.0)
    assert status == full_status == "optimal"
    assert every_row.cost @ solved + every_row.constant == pytest.approx(
        every_row.cost @ full + every_row.constant, abs=1e-7)
    assert np.all(solved[:problem.d] >= lower) and np.all(solved[:problem.d] <= upper)
    assert np.max(problem.constraints.matrix @ solved[:problem.d]
                  - problem.constraints.rhs) <= 1e-7
