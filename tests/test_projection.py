"""Tests for worker.projection: the exact projection Π_g (LightTouch paper, Table 1)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls

import worker.projection as projection
from worker.problem.compiled import ConstraintSet
from worker.projection import Projection, project, project_box

TOL_X = 1e-6          # agreement with the CVXPY reference
TOL_VIOLATION = 1e-7  # residual violation of every returned "optimal" solution


# ---------------------------------------------------------------- builders

def unit_rows(matrix: np.ndarray | sp.spmatrix, rhs: np.ndarray) -> ConstraintSet:
    """ConstraintSet from rows scaled to unit norm (rhs scaled alike); CSR, sorted indices."""
    a = sp.csr_matrix(matrix, dtype=np.float64)
    norms = np.sqrt(np.asarray(a.multiply(a).sum(axis=1)).ravel())
    a = sp.csr_matrix(sp.diags(1.0 / norms) @ a)
    a.sort_indices()
    return ConstraintSet(a, np.asarray(rhs, dtype=np.float64) / norms)


def orderings(pairs: np.ndarray, d: int) -> ConstraintSet:
    """Rows (e_i - e_j)/sqrt(2), b = 0, i.e. w_i <= w_j, for (i, j) in pairs of shape (k, 2),
    declared as orderings (as the ordering constraint types compile them)."""
    return ConstraintSet.of_orderings(pairs, d)


def stack(*sets: ConstraintSet) -> ConstraintSet:
    """Concatenate constraint sets row-wise."""
    return ConstraintSet.stacked(list(sets), sets[0].matrix.shape[1])


def lattice(shape: list[int]) -> ConstraintSet:
    """Monotonicity on a lattice: w_i <= w_j for vertex pairs one step apart along an axis."""
    index = np.arange(int(np.prod(shape))).reshape(shape)
    pairs = []
    for axis, size in enumerate(shape):
        lo = np.take(index, np.arange(size - 1), axis=axis).ravel()
        hi = np.take(index, np.arange(1, size), axis=axis).ravel()
        pairs.append(np.stack([lo, hi], axis=1))
    return orderings(np.concatenate(pairs), index.size)


def random_bounds(rng, w0: np.ndarray, p_inf: float) -> tuple[np.ndarray, np.ndarray]:
    """A box around w0, each side infinite with probability p_inf."""
    d = w0.shape[0]
    lower = w0 - rng.uniform(0.0, 1.0, d)
    upper = w0 + rng.uniform(0.0, 1.0, d)
    lower[rng.random(d) < p_inf] = -np.inf
    upper[rng.random(d) < p_inf] = np.inf
    return lower, upper


def random_general(rng, d: int, m: int, density: float, w0: np.ndarray) -> ConstraintSet:
    """Random rows, feasible at w0 with about a third of them tight."""
    a = sp.random(m, d, density=density, random_state=rng, data_rvs=rng.standard_normal)
    diagonal = sp.csr_matrix((np.ones(m), (np.arange(m), (np.arange(m) + rng.integers(d)) % d)),
                             shape=(m, d))
    a = sp.csr_matrix(a + diagonal)  # no zero rows
    slack = rng.exponential(0.5, m) * (rng.random(m) < 0.66)
    return unit_rows(a, a @ w0 + slack)


def random_dag(rng, d: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """k random orderings consistent with a random permutation, and w0 increasing along it."""
    rank = rng.permutation(d)
    i, j = rng.integers(d, size=(2, 4 * k))
    keep = i != j
    i, j = i[keep][:k], j[keep][:k]
    swap = rank[i] > rank[j]
    pairs = np.stack([np.where(swap, j, i), np.where(swap, i, j)], axis=1)
    return pairs, rank / d


def random_chains(rng, d: int, n_chains: int) -> np.ndarray:
    """Edges of vertex-disjoint chains over a random subset of the coordinates."""
    perm = rng.permutation(d)
    cuts = np.sort(rng.choice(np.arange(1, d), size=n_chains, replace=False))
    edges = [np.stack([c[:-1], c[1:]], axis=1) for c in np.split(perm, cuts)[::2] if len(c) > 1]
    return np.concatenate(edges) if edges else np.stack([perm[:-1], perm[1:]], axis=1)


# ---------------------------------------------------------------- reference and checks

def cvxpy_projection(point, constraints, lower, upper) -> np.ndarray:
    """Reference projection through CVXPY + OSQP at eps 1e-10.

    OSQP (ADMM) rather than Clarabel: on degenerate problems (ties: constraints active with
    zero multiplier, the norm for orderings) an interior-point solution is only within about
    sqrt(tolerance) of the optimum, e.g. 1.5e-6 off at tolerance 1e-12.
    """
    x = cp.Variable(point.shape[0])
    cons = [constraints.matrix @ x <= constraints.rhs]
    up, lo = np.isfinite(upper), np.isfinite(lower)
    if up.any():
        cons.append(x[np.flatnonzero(up)] <= upper[up])
    if lo.any():
        cons.append(x[np.flatnonzero(lo)] >= lower[lo])
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - point)), cons)
    problem.solve(solver=cp.OSQP, eps_abs=1e-10, eps_rel=1e-10, polishing=True,
                  max_iter=1_000_000)
    assert problem.status == cp.OPTIMAL
    return np.asarray(x.value)


def independent_violation(x, constraints, lower, upper) -> float:
    """max(0, A x - b, lower - x, x - upper) from elementwise row sums (no matvec)."""
    g = np.asarray(constraints.matrix.multiply(x[None, :]).sum(axis=1)).ravel() - constraints.rhs
    parts = np.concatenate([g, lower - x, x - upper, [0.0]])
    return float(np.max(parts[~np.isnan(parts)]))


def assert_kkt(x, point, constraints, lower, upper):
    """Certify optimality independently: point - x lies in the cone of the active normals."""
    g = np.vstack([constraints.matrix.toarray(), np.eye(x.size), -np.eye(x.size)])
    h = np.concatenate([constraints.rhs, upper, -lower])
    active = np.flatnonzero(g @ x - h >= -1e-7)
    if active.size == 0:                 # scipy's nnls aborts on a matrix without columns
        np.testing.assert_allclose(x, point, rtol=0, atol=1e-9)
        return
    multipliers, residual = nnls(g[active].T, point - x)
    assert residual <= 1e-6, residual


def check_against_cvxpy(point, constraints, lower, upper, **kwargs) -> Projection:
    """Project, compare with CVXPY, and recompute the reported violation."""
    result = project(point, constraints, lower, upper, **kwargs)
    assert result.status == "optimal"
    assert result.solution.shape == point.shape
    reference = cvxpy_projection(point, constraints, lower, upper)
    np.testing.assert_allclose(result.solution, reference, rtol=0, atol=TOL_X)
    recomputed = independent_violation(result.solution, constraints, lower, upper)
    assert result.max_violation == pytest.approx(recomputed, abs=1e-12)
    assert result.max_violation <= TOL_VIOLATION
    assert np.all(result.solution >= lower) and np.all(result.solution <= upper)
    assert_kkt(result.solution, point, constraints, lower, upper)
    return result


# ---------------------------------------------------------------- random problems vs CVXPY

def make_problem(kind: str, seed: int):
    """(point, constraints, lower, upper, expected method) for one random instance."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 40))
    p_inf = [0.0, 0.5, 1.0][seed % 3]
    if kind == "chains":
        cons = orderings(random_chains(rng, d, max(1, d // 6)), d)
        lo, hi = [(-0.7, 0.9), (-np.inf, 0.4), (-np.inf, np.inf)][seed % 3]
        lower, upper = np.full(d, lo), np.full(d, hi)
        return 1.5 * rng.standard_normal(d), cons, lower, upper, "isotonic"
    if kind == "chains_varying_bounds":
        cons = orderings(random_chains(rng, d, max(1, d // 6)), d)
        lower, upper = random_bounds(rng, np.zeros(d), 0.3)
        return 1.5 * rng.standard_normal(d), cons, lower, upper, "qp"
    if kind in ("dense", "sparse"):
        w0 = rng.standard_normal(d)
        density = 1.0 if kind == "dense" else 0.15
        cons = random_general(rng, d, int(rng.integers(1, 3 * d)), density, w0)
    else:  # "orderings" or "mixed"
        pairs, w0 = random_dag(rng, d, int(rng.integers(d, 3 * d)))
        cons = orderings(pairs, d)
        if kind == "mixed":
            cons = stack(cons, random_general(rng, d, int(rng.integers(1, d)), 0.3, w0))
    lower, upper = random_bounds(rng, w0, p_inf)
    only_orderings_constant_bounds = kind == "orderings" and p_inf == 1.0
    expected = "isotonic" if only_orderings_constant_bounds else "qp"
    return w0 + 2.0 * rng.standard_normal(d), cons, lower, upper, expected


KINDS = ["dense", "sparse", "orderings", "mixed", "chains", "chains_varying_bounds"]
CASES = [(kind, seed) for kind in KINDS for seed in range(4)]


@pytest.mark.parametrize(("kind", "seed"), CASES)
def test_random_problem_matches_cvxpy(kind, seed):
    point, cons, lower, upper, expected_method = make_problem(kind, seed)
    result = check_against_cvxpy(point, cons, lower, upper)
    assert result.method == expected_method


@pytest.mark.parametrize("seed", range(4))
def test_chain_fast_path_agrees_with_forced_qp(seed):
    point, cons, lower, upper, _ = make_problem("chains", seed)
    fast = project(point, cons, lower, upper)
    forced = check_against_cvxpy(point, cons, lower, upper, method="qp")
    assert (fast.method, forced.method) == ("isotonic", "qp")
    np.testing.assert_allclose(fast.solution, forced.solution, rtol=0, atol=TOL_X)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 30))
def test_isotonic_is_exact_on_chains(seed, d):
    rng = np.random.default_rng(seed)
    cons = orderings(random_chains(rng, d, max(1, d // 5)), d)
    lower, upper = np.full(d, -0.5), np.full(d, 1.0)
    point = 2.0 * rng.standard_normal(d)
    fast = project(point, cons, lower, upper)
    forced = project(point, cons, lower, upper, method="qp")
    assert fast.method == "isotonic" and fast.status == "optimal"
    recomputed = independent_violation(fast.solution, cons, lower, upper)
    assert fast.max_violation == pytest.approx(recomputed, abs=1e-12)
    assert fast.max_violation <= 1e-15
    np.testing.assert_allclose(fast.solution, forced.solution, rtol=0, atol=TOL_X)


def test_lattice_matches_cvxpy():
    rng = np.random.default_rng(7)
    cons = lattice([2] * 6)
    assert (cons.m, cons.matrix.shape[1]) == (6 * 32, 64)
    lower, upper = np.full(64, -1.0), np.full(64, 1.0)
    result = check_against_cvxpy(2.0 * rng.standard_normal(64), cons, lower, upper)
    assert result.method == "isotonic"


def test_rectangular_lattice_matches_cvxpy():
    rng = np.random.default_rng(8)
    cons = lattice([3, 4, 2])
    lower, upper = np.full(24, -np.inf), np.full(24, 0.5)
    assert check_against_cvxpy(rng.standard_normal(24), cons, lower, upper).method == "isotonic"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 30), st.sampled_from([0.3, 1.0, 3.0]))
def test_isotonic_is_exact_on_any_order(seed, d, density):
    rng = np.random.default_rng(seed)
    pairs, _ = random_dag(rng, d, int(density * d) + 1)
    cons = orderings(pairs, d)
    lower, upper = np.full(d, -0.8), np.full(d, 1.2)
    point = 2.0 * rng.standard_normal(d)
    fast = project(point, cons, lower, upper)
    assert (fast.method, fast.status) == ("isotonic" if cons.m else "clip", "optimal")
    assert fast.max_violation <= 1e-12
    assert_kkt(fast.solution, point, cons, lower, upper)
    forced = project(point, cons, lower, upper, method="qp")
    np.testing.assert_allclose(fast.solution, forced.solution, rtol=0, atol=1e-8)


def test_orderings_with_bounds_varying_on_a_piece_take_qp_path():
    cons = lattice([2, 2])
    lower, upper = np.array([-1.0, -1.0, -0.5, -1.0]), np.full(4, 1.0)
    result = check_against_cvxpy(np.array([0.5, -2.0, -2.0, 0.0]), cons, lower, upper)
    assert result.method == "qp"


# ---------------------------------------------------------------- paths and edge cases

def test_no_constraints_clips_to_box():
    cons = ConstraintSet(sp.csr_matrix((0, 4)), np.zeros(0))
    lower, upper = np.array([0.0, -np.inf, -1.0, 2.0]), np.array([1.0, 0.0, np.inf, 2.0])
    point = np.array([3.0, 5.0, -7.0, 0.0])
    for result in (project(point, cons, lower, upper), project_box(point, lower, upper)):
        assert (result.method, result.status, result.max_violation) == ("clip", "optimal", 0.0)
        np.testing.assert_array_equal(result.solution, [1.0, 0.0, -1.0, 2.0])
    assert project_box(point, np.full(4, 3.0), np.full(4, 2.0)).status == "infeasible"


def test_single_chain_is_isotonic_regression():
    cons = orderings(np.array([[2, 0], [0, 3], [3, 1]]), 5)   # w2 <= w0 <= w3 <= w1
    point = np.array([1.0, 0.0, 3.0, 2.0, 9.0])              # chain values 3, 1, 2, 0
    result = project(point, cons, np.full(5, -np.inf), np.full(5, 5.0))
    assert result.method == "isotonic"
    np.testing.assert_allclose(result.solution, [1.5, 1.5, 1.5, 1.5, 5.0])


@pytest.mark.parametrize("pairs", [
    [[0, 1], [1, 0]],             # 2-cycle: forces w0 == w1
    [[0, 1], [1, 2], [2, 0]],     # 3-cycle
    [[0, 1], [1, 2], [2, 3], [3, 0]],  # 4-cycle: pointer jumping squares it to the identity
    [[0, 1], [0, 2]],             # out-degree 2
    [[0, 2], [1, 2]],             # in-degree 2
])
def test_non_chain_orderings_take_the_order_path(pairs):
    cons = orderings(np.array(pairs), 4)
    point = np.array([2.0, -1.0, 0.5, 3.0])
    result = check_against_cvxpy(point, cons, np.full(4, -np.inf), np.full(4, np.inf))
    assert result.method == "isotonic"


def test_duplicate_orderings_still_take_isotonic_path():
    cons = orderings(np.array([[0, 1], [1, 2], [0, 1]]), 3)
    result = check_against_cvxpy(np.array([3.0, 2.0, 1.0]), cons, np.full(3, -1.0),
                                 np.full(3, 1.0))
    assert result.method == "isotonic"
    np.testing.assert_allclose(result.solution, [1.0, 1.0, 1.0])


def test_ordering_with_nonzero_rhs_is_not_a_chain():
    cons = orderings(np.array([[0, 1]]), 2)
    cons = ConstraintSet(cons.matrix, np.array([0.25]))     # rows alone declare no ordering
    result = check_against_cvxpy(np.array([1.0, 0.0]), cons, np.full(2, -np.inf),
                                 np.full(2, np.inf))
    assert result.method == "qp"


def test_ordering_rows_not_declared_as_orderings_take_qp_path():
    """The path comes from what the constraint types declare, not from the rows' values: the
    same rows given as general (linear) rows are projected by the QP, to the same point."""
    declared = orderings(np.array([[0, 1], [1, 2]]), 3)
    general = ConstraintSet(declared.matrix, declared.rhs)
    point, lower, upper = np.array([2.0, 0.0, -1.0]), np.full(3, -5.0), np.full(3, 5.0)
    fast, plain = project(point, declared, lower, upper), project(point, general, lower, upper)
    assert (fast.method, plain.method) == ("isotonic", "qp")
    np.testing.assert_allclose(plain.solution, fast.solution, atol=1e-8)


def test_degenerate_ties_are_polished_to_the_exact_projection():
    # w0 <= w1, w0 <= w2 from (2, -1, 0.5): all three pool at 0.5 and w0 <= w2 is active with
    # a zero multiplier. Clarabel alone is ~1.5e-5 off here; the active-set polish is exact.
    cons = orderings(np.array([[0, 1], [0, 2]]), 4)
    result = project(np.array([2.0, -1.0, 0.5, 3.0]), cons, np.full(4, -np.inf),
                     np.full(4, np.inf), method="qp")
    assert (result.method, result.status) == ("qp", "optimal")
    np.testing.assert_allclose(result.solution, [0.5, 0.5, 0.5, 3.0], rtol=0, atol=1e-12)


def test_polish_repairs_a_wrong_active_set_guess():
    # Rows: w0 - w1 <= 0 (active at the optimum), w3 <= 5 (inactive). Guess the opposite.
    g = sp.csr_matrix(np.array([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]))
    h = np.array([0.0, 5.0])
    point = np.array([2.0, -1.0, 0.5, 3.0])
    x = projection._polish(point, g, h, point.copy(), z=np.array([0.0, 1.0]),
                           s=np.array([1.0, 0.0]))
    np.testing.assert_allclose(x, [0.5, 0.5, 0.5, 3.0], rtol=0, atol=1e-12)


def test_paper_size_lattice_takes_the_exact_order_path():
    # The paper's experiment (§6): d = 4096, 12 lattice dimensions, m = 24,576, box [-10, 10].
    cons, d = lattice([2] * 12), 4096
    assert cons.m == 24_576
    point = np.random.default_rng(4).normal(0.0, 5.0, d)
    lower, upper = np.full(d, -10.0), np.full(d, 10.0)
    result = project(point, cons, lower, upper)
    assert (result.method, result.status) == ("isotonic", "optimal")
    assert result.max_violation <= 1e-12
    assert result.max_violation == pytest.approx(
        independent_violation(result.solution, cons, lower, upper), abs=1e-12)


@pytest.mark.slow
def test_paper_size_lattice_order_path_agrees_with_qp():
    cons, d = lattice([2] * 12), 4096
    point = np.random.default_rng(4).normal(0.0, 5.0, d)   # seed 4 needs two polish rounds
    lower, upper = np.full(d, -10.0), np.full(d, 10.0)
    fast = project(point, cons, lower, upper)
    forced = project(point, cons, lower, upper, method="qp")
    assert (forced.method, forced.status) == ("qp", "optimal")
    assert forced.max_violation <= 1e-9
    np.testing.assert_allclose(fast.solution, forced.solution, rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["auto", "qp"])
def test_infeasible_constraints_return_status(method):
    # w0 <= -1 and -w0 <= -1 (i.e. w0 >= 1): empty.
    cons = unit_rows(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]))
    lower, upper = np.full(2, -5.0), np.full(2, 5.0)
    point = np.array([7.0, 0.5])
    result = project(point, cons, lower, upper, method=method)
    assert (result.status, result.method) == ("infeasible", "qp")
    np.testing.assert_array_equal(result.solution, [5.0, 0.5])
    assert result.max_violation == pytest.approx(6.0)
    assert result.max_violation == independent_violation(result.solution, cons, lower, upper)
    assert result.seconds < 10.0


def test_constraints_infeasible_with_box():
    cons = unit_rows(np.array([[-1.0, -1.0]]), np.array([-3.0]))   # w0 + w1 >= 3
    lower, upper = np.zeros(2), np.ones(2)
    result = project(np.zeros(2), cons, lower, upper)
    assert result.status == "infeasible"
    assert result.max_violation == pytest.approx(3.0 / np.sqrt(2.0))


def test_empty_box_is_infeasible():
    cons = orderings(np.array([[0, 1]]), 2)
    result = project(np.zeros(2), cons, np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    assert result.status == "infeasible"
    assert result.max_violation == pytest.approx(1.0)


def test_bad_input_raises_value_error():
    cons = orderings(np.array([[0, 1]]), 2)
    with pytest.raises(ValueError, match="shape"):
        project(np.zeros(3), cons, np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        project(np.array([np.nan, 0.0]), cons, np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="NaN"):
        project(np.zeros(2), cons, np.array([0.0, np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="method"):
        project(np.zeros(2), cons, np.zeros(2), np.ones(2), method="isotonic")
