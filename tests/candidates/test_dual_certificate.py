"""The dual certificate against CVXPY/Clarabel's exact optimum: every choice of multipliers is
below it, the LP's own multipliers reach it, and on an order the refitted constraint
multipliers are the best for the example weights."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.candidates.hinge_problems import exact
from tests.problems import random_problem
from worker.candidates.dual_certificate import dual_value, margin_weights, ordering_multipliers
from worker.candidates.hinge_lp import lp_duals, piecewise_lp, signed_rows
from worker.candidates.lower_bound import PDLP_ROWS, hinge_lower_bound, solver_for
from worker.problem.compiled import ConstraintSet

CONSTRAINTS = ["none", "linear", "ordering", "lattice"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CONSTRAINTS), st.integers(0, 10**6), st.floats(0.0, 3.0),
       st.floats(0.1, 5.0))
def test_any_multipliers_give_a_bound_below_the_optimum(constraint, seed, spread, box):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=seed, bound=box)
    optimum, _ = exact(problem)
    signed, rng = signed_rows(problem), np.random.default_rng(seed)
    alpha = rng.uniform(-0.5, 1.5, size=problem.n)       # clipped to [0, 1] inside
    lam = rng.normal(scale=spread, size=problem.m)         # clipped to >= 0 inside
    assert dual_value(problem, signed, alpha, lam) <= optimum + 1e-9
    refit = ordering_multipliers(problem, signed, alpha)
    if constraint in ("ordering", "lattice"):
        assert refit is not None
        assert dual_value(problem, signed, alpha, refit) <= optimum + 1e-9
        # the refit is the best lam for these weights: no worse than the random one
        assert dual_value(problem, signed, alpha, refit) >= \
            dual_value(problem, signed, alpha, lam) - 1e-12
    else:
        assert refit is None


@pytest.mark.parametrize("solver", ["ipm", "pdlp"])
@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_whole_lps_multipliers_certify_the_optimum(solver, constraint, seed):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=seed)
    optimum, solution = exact(problem)
    signed = signed_rows(problem)
    margins = signed.margins(solution)
    lp = piecewise_lp(problem, signed, margins, np.arange(problem.n), problem.lower,
                      problem.upper)
    _, duals, status = lp_duals(lp, 30.0, solver)
    assert status == "optimal"
    alpha, lam = duals[problem.m:] * problem.n, duals[:problem.m]
    value = dual_value(problem, signed, alpha, lam)
    assert optimum - 1e-5 <= value <= optimum + 1e-9
    refit = ordering_multipliers(problem, signed, alpha)
    if refit is not None:
        assert value - 1e-12 <= dual_value(problem, signed, alpha, refit) <= optimum + 1e-9


def test_margins_alone_give_a_valid_but_looser_bound():
    problem = random_problem("hinge", "lattice", d=8, n=40, seed=0)
    optimum, solution = exact(problem)
    signed = signed_rows(problem)
    alpha = margin_weights(signed.margins(solution))
    value = dual_value(problem, signed, alpha, ordering_multipliers(problem, signed, alpha))
    assert value <= optimum + 1e-9
    assert value < optimum - 1e-3


def test_an_infinite_side_of_the_box_where_the_cost_is_not_zero_gives_no_bound():
    problem = random_problem("hinge", "none", d=8, n=40, seed=0)
    problem.upper[0] = np.inf
    signed = signed_rows(problem)
    alpha = np.ones(problem.n)
    c0 = -signed.transpose_dot(alpha)[0]
    if c0 >= 0:
        problem.lower[0], problem.upper[0] = -np.inf, 1.0
    assert dual_value(problem, signed, alpha, np.zeros(0)) == -np.inf


@pytest.mark.parametrize("seconds", [1e-3, 0.05, 30.0])
@pytest.mark.parametrize("constraint", ["ordering", "lattice", "linear"])
def test_pdlp_stopped_at_any_time_still_gives_a_bound_below_the_optimum(seconds, constraint):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=3, bound=10.0)
    optimum, _ = exact(problem)
    bound = hinge_lower_bound(problem, np.zeros(problem.d), 0.05, 8, seconds, "pdlp")
    assert bound.status == "optimal"
    assert bound.value <= optimum + 1e-9


def test_a_hundred_thousand_ordering_rows_take_pdlp_and_a_small_lattice_the_interior_point():
    chain = np.arange(PDLP_ROWS + 1)
    many = random_problem("hinge", "none", d=8, n=40, seed=0)
    many = replace(many, constraints=ConstraintSet.of_orderings(
        np.column_stack([chain[:-1], chain[1:]]), PDLP_ROWS + 1))
    assert solver_for(many) == "pdlp"
    assert solver_for(random_problem("hinge", "lattice", d=8, n=40, seed=0)) == "ipm"
