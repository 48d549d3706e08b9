"""The dual certificate raised by supergradient ascent: always below CVXPY/Clarabel's exact
optimum, never below its start, higher after steps from a poor start, and the bound at scale
on an order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.candidates.hinge_problems import exact, on_an_order
from tests.problems import random_problem
from worker.candidates import lower_bound
from worker.candidates.dual_ascent import ascended_bound
from worker.candidates.dual_certificate import dual_value, margin_weights, ordering_multipliers
from worker.candidates.hinge_lp import signed_rows


@settings(max_examples=40, deadline=None)
@given(on_an_order(), st.integers(1, 30))
def test_the_ascent_stays_below_the_optimum_and_above_its_start(case, steps):
    problem, optimum, reference = case
    signed = signed_rows(problem)
    alpha = margin_weights(signed.margins(reference))
    start = dual_value(problem, signed, alpha, ordering_multipliers(problem, signed, alpha))
    value = ascended_bound(problem, signed, alpha, 60.0, steps).value
    assert start - 1e-12 <= value <= optimum + 1e-9


def test_steps_raise_the_bound_from_a_poor_start():
    problem = random_problem("hinge", "lattice", d=8, n=200, seed=1, bound=10.0)
    optimum, _ = exact(problem)
    signed = signed_rows(problem)
    alpha = margin_weights(signed.margins(np.zeros(problem.d)))
    first = ascended_bound(problem, signed, alpha, 60.0, 1).value
    many = ascended_bound(problem, signed, alpha, 60.0, 200, flat_gain=0.0).value
    assert many > first + 0.1 * (optimum - first)
    assert many <= optimum + 1e-9


def test_constraints_other_than_an_order_have_no_ascent():
    problem = random_problem("hinge", "linear", d=8, n=40, seed=0)
    signed = signed_rows(problem)
    assert ascended_bound(problem, signed, np.ones(problem.n), 1.0).value is None


def test_at_scale_an_order_is_bounded_by_the_ascent(monkeypatch):
    monkeypatch.setattr(lower_bound, "PDLP_ROWS", 1)        # every problem is "at scale"
    problem = random_problem("hinge", "lattice", d=8, n=60, seed=2, bound=10.0)
    optimum, solution = exact(problem)
    bound = lower_bound.widened_lower_bound(problem, solution, optimum, 2.0)
    assert bound.status == "ascent"
    assert bound.value <= optimum + 1e-9
    linear = random_problem("hinge", "linear", d=8, n=60, seed=2, bound=10.0)
    assert lower_bound.widened_lower_bound(linear, np.zeros(8), 1.0, 2.0).status != "ascent"
