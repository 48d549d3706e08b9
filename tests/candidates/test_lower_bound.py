"""The hinge LP's lower bound against CVXPY/Clarabel's exact optimum, and in a solve."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.candidates.hinge_problems import exact, hinge_spec
from tests.problems import random_problem
from worker.candidates import lower_bound
from worker.candidates.lower_bound import (
    bound_seconds,
    hinge_lower_bound,
    lower_bound_stats,
    widened_lower_bound,
)
from worker.pipeline.solve import solve


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["none", "linear", "ordering", "lattice"]), st.integers(0, 10**6),
       st.floats(0.0, 0.5), st.integers(0, 40), st.floats(0.0, 2.0))
def test_any_reference_gives_a_bound_below_the_optimum(constraint, seed, band, keep, spread):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=seed)
    optimum, _ = exact(problem)
    reference = np.random.default_rng(seed).normal(scale=spread, size=problem.d)
    bound = hinge_lower_bound(problem, reference, band, keep)
    assert bound is not None
    assert bound.band_examples >= keep
    assert bound.value <= optimum + 1e-6


@pytest.mark.parametrize("constraint", ["none", "linear", "ordering", "lattice"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bound_is_the_optimum_at_the_optimum_or_with_every_example_kept(constraint, seed):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=seed)
    optimum, solution = exact(problem)
    at_optimum = hinge_lower_bound(problem, solution, 1e-3, keep=0)
    assert at_optimum.band_examples < problem.n
    assert at_optimum.value == pytest.approx(optimum, abs=1e-6)
    for everything in (hinge_lower_bound(problem, np.zeros(problem.d), math.inf, keep=0),
                       hinge_lower_bound(problem, np.zeros(problem.d), 0.0)):   # n <= KEEP
        assert everything.band_examples == problem.n
        assert everything.value == pytest.approx(optimum, abs=1e-6)


@pytest.mark.parametrize(("loss", "l1", "l2"), [("logistic", 0.0, 0.0), ("squared", 0.0, 0.0),
                                                ("quadratic", 0.0, 0.0), ("hinge", 0.1, 0.0),
                                                ("hinge", 0.0, 0.1)])
def test_problems_other_than_the_hinge_lp_have_no_bound(loss, l1, l2):
    problem = random_problem(loss, "ordering", l1=l1, l2=l2)
    assert hinge_lower_bound(problem, np.zeros(problem.d)) is None
    assert lower_bound_stats(problem, np.zeros(problem.d), 1.0, 5.0) is None


def test_an_unbounded_lp_or_one_out_of_time_gives_no_bound_and_says_why():
    unbounded = hinge_lower_bound(random_problem("hinge", "none", bound=math.inf),
                                  np.zeros(8), 0.0, keep=0)
    assert (unbounded.status, unbounded.value) == ("unbounded", None)
    problem = random_problem("hinge", "ordering", d=128, n=4000)   # about 2 s to solve
    late = hinge_lower_bound(problem, np.zeros(problem.d), time_limit=1e-4)
    assert (late.status, late.value) == ("time_limit", None)
    assert hinge_lower_bound(problem, np.zeros(problem.d)).status == "optimal"


def test_the_bound_takes_a_share_of_the_solve_or_what_is_left_of_the_time_limit():
    assert bound_seconds(4.0, 0.0) == 10.0                 # at least 10 s
    assert bound_seconds(80.0, 0.0) == 20.0                # a quarter of the solve
    assert bound_seconds(600.0, 0.0) == 30.0               # at most 30 s
    assert bound_seconds(600.0, 45.0) == 45.0              # unless more is left
    assert bound_seconds(80.0, -3.0) == 20.0


def test_a_solve_reports_the_bound_and_its_gap(tmp_path):
    spec = hinge_spec(tmp_path, 20_000)
    result = solve(spec, roots=[tmp_path])
    stats = result.stats
    objective = result.projected.objective
    assert stats["lower_bound"] <= objective + 1e-9
    assert stats["gap"] == pytest.approx(objective - stats["lower_bound"])
    assert stats["relative_gap"] == pytest.approx(stats["gap"] / abs(stats["lower_bound"]))
    assert stats["lower_bound_status"] == "optimal"
    assert stats["lower_bound_examples"] == 300              # n <= KEEP: the exact optimum
    assert stats["relative_gap"] < 0.05
    off = solve(dict(spec, output={"lower_bound": False}), roots=[tmp_path])
    assert "lower_bound" not in off.stats


@pytest.mark.parametrize("constraint", ["linear", "ordering", "lattice"])
def test_a_wider_band_is_tried_while_the_answer_is_far_from_the_bound(monkeypatch, constraint):
    problem = random_problem("hinge", constraint, d=8, n=400, seed=5)
    optimum, _ = exact(problem)
    monkeypatch.setattr(lower_bound, "KEEP", 10)
    reference = np.random.default_rng(5).normal(scale=0.5, size=problem.d)
    first = hinge_lower_bound(problem, reference, lower_bound.BAND, 10)
    objective = optimum * 1.5 + 1.0                 # an answer the first band cannot certify
    widened = widened_lower_bound(problem, reference, objective, 60.0)
    assert first.value <= widened.value <= optimum + 1e-6
    assert widened.band_examples >= first.band_examples
    every = [hinge_lower_bound(problem, reference, lower_bound.BAND * 2**k, 10).value
             for k in range(1 + lower_bound.WIDENINGS)]
    assert widened.value == pytest.approx(max(every), abs=1e-9)
    assert max(every) > first.value                 # the wider bands did tighten it
    close = widened_lower_bound(problem, reference, first.value, 60.0)   # certified at once
    assert (close.value, close.band_examples) == (first.value, first.band_examples)


@pytest.mark.parametrize("constraint", ["ordering", "lattice", "linear"])
def test_a_band_lp_out_of_time_leaves_the_margins_certificate_on_an_order(constraint):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=5, bound=10.0)
    optimum, solution = exact(problem)
    late = widened_lower_bound(problem, solution, optimum, time_limit=0.0)
    if constraint == "linear":       # no order to refit the multipliers on: no bound
        assert (late.status, late.value) == ("time_limit", None)
    else:
        assert late.status == "margins"
        assert late.value <= optimum + 1e-9
