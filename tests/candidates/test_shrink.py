"""Tests for worker.candidates.shrink: the m+1 shrinking LP (Cotter, Jiang, Sridharan, Lemma 3)."""

from __future__ import annotations

import doctest
import re
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import worker.candidates.shrink as shrink
from worker.candidates.shrink import best_mixture, expected_violation
from worker.errors import SolverError

# Known answer from TFCO: google-research/tensorflow_constrained_optimization,
# tensorflow_constrained_optimization/python/candidates_test.py, test_best_distribution:
# four candidates, two constraints (rows = candidates); the best distribution is feasible and
# mixes candidates 0 and 1 so that constraint 0 is exactly tight.
TFCO_OBJECTIVES = np.array([0.03053309, -0.06667082, 0.88355145, 0.46529806])
TFCO_VIOLATIONS = np.array([[-0.60164551, 0.00371592],
                            [0.36676229, -0.16392108],
                            [0.7856454, -0.59778071],
                            [-0.8441711, -0.56908492]])
TFCO_EXPECTED = np.array([0.37872711, 0.62127289, 0.0, 0.0])


# The references use cvxpy's own canonicalization and HiGHS's interior-point method with
# crossover (not the dual simplex under test), so they are independent and vertex-accurate.
# (Clarabel was tried: at 1e-10 tolerances it warns "Solution may be inaccurate".) HiGHS's
# default 1e-7 feasibility tolerance is too loose for near-degenerate data: it may break
# sum(p) == 1 by 8e-8 and so "beat" the true LP2 optimum by 0.6, hence 1e-10.
REFERENCE = {"solver": cp.HIGHS,
             "highs_options": {"solver": "ipm", "run_crossover": "on",
                               "primal_feasibility_tolerance": 1e-10,
                               "dual_feasibility_tolerance": 1e-10}}


def reference_min_violation(v: np.ndarray) -> float:
    """LP1 solved independently with cvxpy + HiGHS interior point."""
    t, m = v.shape
    if m == 0:
        return 0.0
    p, z = cp.Variable(t), cp.Variable()
    cp.Problem(cp.Minimize(z), [v.T @ p <= z, z >= 0, p >= 0, cp.sum(p) == 1]).solve(
        **REFERENCE)
    return float(z.value)


def reference_best_objective(f: np.ndarray, v: np.ndarray, bound: float) -> float:
    """LP2 with cvxpy + HiGHS interior point: min f.p, p in the simplex, v.T p <= bound."""
    p = cp.Variable(f.shape[0])
    constraints = [p >= 0, cp.sum(p) == 1]
    if v.shape[1]:
        constraints.append(v.T @ p <= bound)
    problem = cp.Problem(cp.Minimize(f @ p), constraints)
    problem.solve(**REFERENCE)
    return float(problem.value)


def n_violated_columns(v: np.ndarray) -> int:
    return int((v.max(axis=0) > 0).sum()) if v.shape[1] else 0


def check_distribution(w: np.ndarray, t: int) -> None:
    assert w.shape == (t,)
    assert np.all(w >= 0)
    assert abs(w.sum() - 1.0) <= 1e-12


def test_tfco_known_answer():
    w = best_mixture(TFCO_OBJECTIVES, TFCO_VIOLATIONS)
    check_distribution(w, 4)
    np.testing.assert_allclose(w, TFCO_EXPECTED, rtol=0, atol=1e-6)
    assert expected_violation(w, TFCO_VIOLATIONS) <= 1e-6
    # By hand: constraint 0 tight on candidates {0, 1} gives p1 = 0.6016 / (0.6016 + 0.3668).
    p1 = 0.60164551 / (0.60164551 + 0.36676229)
    assert w[1] == pytest.approx(p1, abs=1e-8)


def test_shrinking_beats_uniform_average():
    f, v = TFCO_OBJECTIVES, TFCO_VIOLATIONS
    uniform = np.full(4, 0.25)
    w = best_mixture(f, v)
    assert expected_violation(uniform, v) == 0.0  # the average of the iterates is feasible...
    assert expected_violation(w, v) <= 1e-8  # ...and so is the shrunk mixture,
    assert w @ f < uniform @ f - 0.3  # which is much better: -0.030 versus 0.328
    assert np.count_nonzero(w) == 2 < 4


@pytest.mark.parametrize("scale", [1e-12, 1e-6, 1e6, 1e12])
def test_scale_invariance(scale):
    # Violations and objectives this small would fall below HiGHS's small_matrix_value (1e-9)
    # and be dropped as zeros, were they not rescaled before the LP.
    w = best_mixture(scale * TFCO_OBJECTIVES, scale * TFCO_VIOLATIONS)
    np.testing.assert_allclose(w, TFCO_EXPECTED, rtol=0, atol=1e-6)
    w = best_mixture(TFCO_OBJECTIVES + 1e6, scale * TFCO_VIOLATIONS)  # shifted objective
    np.testing.assert_allclose(w, TFCO_EXPECTED, rtol=0, atol=1e-6)


def test_nothing_violated_picks_best_objective_lowest_index():
    f = np.array([3.0, 1.0, 2.0, 1.0])
    w = best_mixture(f, -np.ones((4, 5)))
    np.testing.assert_array_equal(w, [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(best_mixture(f, np.zeros((4, 0))), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(best_mixture(np.array([7.0]), np.ones((1, 3))), [1.0])


def test_all_infeasible_minimizes_violation_first():
    # Candidate 0 has the best objective but the worst violation; only the mix of 1 and 2
    # reaches the least max violation 0.5 (v = (1, 0) and (0, 1) averaged).
    f = np.array([-10.0, 1.0, 2.0])
    v = np.array([[5.0, 5.0], [1.0, 0.0], [0.0, 1.0]])
    w = best_mixture(f, v)
    np.testing.assert_allclose(w, [0.0, 0.5, 0.5], atol=1e-8)
    assert expected_violation(w, v) == pytest.approx(0.5, abs=1e-8)


def test_huge_m_with_few_violated_columns():
    rng = np.random.default_rng(0)
    t, m = 100, 10**6
    v = np.full((t, m), -1.0, dtype=np.float32)  # 400 MB; only kept columns become float64
    cols = np.sort(rng.choice(m, size=50, replace=False))
    v[:, cols] = rng.normal(size=(t, 50))
    f = rng.normal(size=t)
    w = best_mixture(f, v)
    check_distribution(w, t)
    assert np.count_nonzero(w) <= 51
    # Dropping never-violated columns is exact: same answer as the 50-column problem.
    np.testing.assert_array_equal(w, best_mixture(f, v[:, cols]))
    z = reference_min_violation(v[:, cols])
    assert expected_violation(w, v) == pytest.approx(z, abs=1e-7)


def test_deterministic_and_accepts_float32_and_int():
    rng = np.random.default_rng(1)
    f, v = rng.normal(size=30), rng.normal(size=(30, 8))
    w = best_mixture(f, v)
    np.testing.assert_array_equal(w, best_mixture(f.copy(), v.copy()))
    w32 = best_mixture(f.astype(np.float32), v.astype(np.float32))
    assert expected_violation(w32, v) == pytest.approx(expected_violation(w, v), abs=1e-6)
    check_distribution(best_mixture(np.arange(3), np.array([[1, -1], [-1, 1], [2, 2]])), 3)


@pytest.mark.parametrize(("objectives", "violations", "message"), [
    (np.zeros(5), "nan at [3, 17]", "violations[3, 17] is nan"),
    (np.array([0.0, 1.0, np.inf]), np.zeros((3, 2)), "objectives[2] is inf"),
    (np.array([0.0, -np.inf]), np.zeros((2, 2)), "objectives[1] is -inf"),
    (np.zeros(3), np.zeros((4, 2)), "violations must have T = 3 rows"),
    (np.zeros(3), np.zeros(3), "violations must be 2-D"),
    (np.zeros((3, 1)), np.zeros((3, 2)), "objectives must be 1-D"),
    (np.zeros(0), np.zeros((0, 2)), "at least one candidate"),
    (np.zeros(2), np.array([["a"], ["b"]]), "violations must hold real numbers"),
])
def test_bad_inputs_raise_value_error(objectives, violations, message):
    if isinstance(violations, str):  # the NaN case, built here where the index is visible
        violations = np.zeros((5, 20))
        violations[3, 17] = np.nan
    with pytest.raises(ValueError, match=re.escape(message)):
        best_mixture(objectives, violations)


def test_lp_failure_raises_solver_error(monkeypatch):
    def failing(*args, **kwargs):
        return SimpleNamespace(status=4, message="Numerical difficulties encountered.")

    monkeypatch.setattr(shrink, "linprog", failing)
    with pytest.raises(SolverError, match="LP1.*Numerical difficulties"):
        best_mixture(TFCO_OBJECTIVES, TFCO_VIOLATIONS)


def test_docstring_examples():
    assert doctest.testmod(shrink).failed == 0


GRID = st.integers(-8, 8).map(lambda k: k / 4.0)  # coarse values: many ties
# Magnitudes below 1e-6 are flushed to 0: the HiGHS reference silently treats matrix entries
# below 1e-9 as zero (best_mixture rescales first; test_scale_invariance covers tiny data).
FLOATS = st.floats(-10.0, 10.0).map(lambda x: x if abs(x) >= 1e-6 else 0.0)


@st.composite
def candidate_sets(draw):
    t = draw(st.integers(1, 8))
    m = draw(st.integers(0, 6))
    values = draw(st.sampled_from([GRID, FLOATS]))
    f = draw(hnp.arrays(np.float64, t, elements=values))
    v = draw(hnp.arrays(np.float64, (t, m), elements=values))
    if draw(st.booleans()):  # every candidate violates something: z* > 0
        v = np.abs(v) + 0.5
    return f, v


@settings(max_examples=80, deadline=None)
@given(candidate_sets())
def test_invariants_against_independent_lp(case):
    f, v = case
    t = f.shape[0]
    w = best_mixture(f, v)
    check_distribution(w, t)
    assert np.count_nonzero(w) <= n_violated_columns(v) + 1
    # The expected max violation is the LP1 optimum...
    ev = expected_violation(w, v)
    z = reference_min_violation(v)
    assert ev == pytest.approx(z, abs=1e-7)
    # ...and the objective is the best possible at that violation (LP2).
    assert w @ f <= reference_best_objective(f, v, ev) + 1e-6
    # In particular no worse than the uniform average whenever that is equally feasible.
    uniform = np.full(t, 1.0 / t)
    if expected_violation(uniform, v) <= ev:
        assert w @ f <= uniform @ f + 1e-7
