"""The primal-dual method on a hinge-loss LP over an order: its point always feasible and its
bound always below CVXPY/Clarabel's exact optimum, both closing on it, the same bits from the
same start, and the order's exact projection against the general one."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.candidates.hinge_problems import exact, on_an_order
from tests.problems import random_problem
from worker.algorithms.bounds.smooth_part import objective_value
from worker.candidates import lower_bound
from worker.candidates.hinge_lp import signed_rows
from worker.candidates.order_box import OrderBox
from worker.candidates.primal_dual import primal_dual
from worker.projection import project


def later(seconds: float = 60.0) -> float:
    return time.perf_counter() + seconds


def run(problem, start, seconds: float = 60.0, tolerance: float = 1e-12, **options):
    return primal_dual(problem, signed_rows(problem), start, later(seconds), tolerance,
                       **options)


def violation(problem, w) -> float:
    return max(float(problem.constraints.values(w).max(initial=0.0)),
               float(np.max(problem.lower - w)), float(np.max(w - problem.upper)))


@settings(max_examples=30, deadline=None)
@given(on_an_order(), st.floats(0.05, 0.5))
def test_the_point_is_feasible_and_the_bound_below_the_optimum(case, seconds):
    problem, optimum, start = case
    found = run(problem, start, seconds)
    assert violation(problem, found.point) <= 1e-12
    assert found.objective == pytest.approx(objective_value(problem.objective, found.point),
                                            abs=1e-12)
    assert found.objective >= optimum - 1e-7
    assert found.bound <= optimum + 1e-9
    assert found.refits >= 1 and (found.steps >= 1 or found.stopped == "tolerance")


@pytest.mark.parametrize("constraint", ["ordering", "lattice"])
def test_point_and_bound_close_on_the_optimum(constraint):
    problem = random_problem("hinge", constraint, d=8, n=200, seed=1, bound=10.0)
    optimum, _ = exact(problem)
    found = run(problem, np.zeros(problem.d), tolerance=1e-4)
    assert found.stopped == "tolerance"
    assert found.objective - found.bound <= 1e-4 * abs(found.bound)
    assert found.bound - 1e-9 <= optimum <= found.objective + 1e-7


def test_the_same_start_gives_the_same_bits():
    problem = random_problem("hinge", "lattice", d=8, n=200, seed=3, bound=10.0)
    first, second = (run(problem, np.zeros(problem.d), tolerance=1e-3) for _ in range(2))
    assert first.steps == second.steps
    assert np.array_equal(first.point, second.point) and first.bound == second.bound


def test_a_deadline_past_stops_after_one_step_with_a_bound():
    problem = random_problem("hinge", "lattice", d=8, n=60, seed=4, bound=10.0)
    optimum, _ = exact(problem)
    found = run(problem, np.zeros(problem.d), seconds=-1.0)
    assert (found.steps, found.stopped) == (1, "time_limit")
    assert found.bound <= optimum + 1e-9


def test_constraints_other_than_an_order_have_none():
    problem = random_problem("hinge", "linear", d=8, n=40, seed=0)
    assert run(problem, np.zeros(problem.d)) is None
    assert OrderBox.of(problem) is None


def test_a_box_that_varies_on_a_piece_has_no_order_box():
    problem = random_problem("hinge", "ordering", d=8, n=40, seed=0, bound=1.0)
    problem.upper[problem.constraints.orderings[0, 1]] = 2.0
    assert OrderBox.of(problem) is None


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["ordering", "lattice"]), st.integers(0, 10**6), st.floats(0.1, 5.0))
def test_the_order_projection_is_the_general_one(constraint, seed, box):
    problem = random_problem("hinge", constraint, d=8, n=10, seed=seed, bound=box)
    point = np.random.default_rng(seed).normal(scale=3.0, size=problem.d)
    general = project(point, problem.constraints, problem.lower, problem.upper,
                      method="qp").solution
    order = OrderBox.of(problem)
    np.testing.assert_allclose(order.project(point), general, atol=1e-6)
    near = order.project(point + np.random.default_rng(seed + 1).normal(size=problem.d))
    np.testing.assert_allclose(order.project(point, near=near), general, atol=1e-6)


def test_the_ascent_from_its_weights_starts_at_its_bound(monkeypatch):
    monkeypatch.setattr(lower_bound, "PDLP_ROWS", 1)          # an order at scale: the ascent
    problem = random_problem("hinge", "lattice", d=8, n=200, seed=5, bound=10.0)
    optimum, _ = exact(problem)
    found = run(problem, np.zeros(problem.d), seconds=0.2)
    bound = lower_bound.widened_lower_bound(problem, found.point, found.objective, 0.5,
                                            alpha=found.alpha)
    assert bound.status == "ascent"
    assert found.bound - 1e-12 <= bound.value <= optimum + 1e-9
