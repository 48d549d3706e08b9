"""The trust-region LP polish against CVXPY/Clarabel's exact optimum, and in a solve."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.candidates.hinge_problems import exact, hinge_spec
from tests.problems import random_problem
from worker.algorithms.run.options import SolverOptions
from worker.candidates.polish import (
    on_trust_side,
    polish,
    remaining_estimate,
    trust_radius,
)
from worker.pipeline.polishing import ALGORITHM_SHARE, ALGORITHM_TOLERANCE, algorithm_options
from worker.pipeline.solve import solve
from worker.projection import project

CONSTRAINTS = ["none", "linear", "ordering", "lattice"]


def feasible_start(problem, seed: int, spread: float = 1.0) -> np.ndarray:
    """The exact projection of a random point."""
    point = np.random.default_rng(seed).normal(scale=spread, size=problem.d)
    return project(point, problem.constraints, problem.lower, problem.upper).solution


def later(seconds: float = 60.0) -> float:
    return time.perf_counter() + seconds


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trust_region_rounds_reach_the_exact_optimum(constraint, seed):
    problem = random_problem("hinge", constraint, d=8, n=200, seed=seed)
    optimum, _ = exact(problem)
    polished = polish(problem, feasible_start(problem, seed), later(), 1e-12, examples=20)
    assert polished.rounds > 1                      # the trust region was in the way
    assert polished.examples < problem.n
    assert polished.status == "optimal"
    assert polished.objective == pytest.approx(optimum, abs=1e-6)
    assert hinge_objective_of(problem, polished.solution) == pytest.approx(polished.objective)


def hinge_objective_of(problem, w: np.ndarray) -> float:
    objective = problem.objective
    return float(np.maximum(0.0, 1.0 - objective.labels * (objective.features @ w)).mean())


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(CONSTRAINTS), st.integers(0, 10**6), st.integers(1, 80),
       st.floats(0.0, 3.0))
def test_every_polish_is_feasible_and_no_worse_than_its_start(constraint, seed, examples,
                                                             spread):
    problem = random_problem("hinge", constraint, d=8, n=100, seed=seed)
    optimum, _ = exact(problem)
    start = feasible_start(problem, seed, spread)
    polished = polish(problem, start, later(), 1e-3, examples=examples)
    w = polished.solution
    assert polished.start_objective == pytest.approx(hinge_objective_of(problem, start))
    assert polished.objective <= polished.start_objective + 1e-12
    assert polished.objective >= optimum - 1e-6
    assert np.all(w >= problem.lower) and np.all(w <= problem.upper)
    if problem.m:
        assert np.max(problem.constraints.matrix @ w - problem.constraints.rhs) <= 1e-7


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_with_every_example_kept_one_lp_is_the_optimum(constraint):
    problem = random_problem("hinge", constraint, d=8, n=100, seed=3)
    optimum, _ = exact(problem)
    polished = polish(problem, feasible_start(problem, 3), later(), 1e-3)   # n <= EXAMPLES
    assert (polished.status, polished.rounds, polished.examples) == ("optimal", 1, 100)
    assert polished.objective == pytest.approx(optimum, abs=1e-6)


def test_a_deadline_that_has_passed_returns_the_start():
    problem = random_problem("hinge", "ordering", d=8, n=100)
    start = feasible_start(problem, 0)
    polished = polish(problem, start, time.perf_counter() - 1.0, 1e-3, examples=10)
    assert (polished.status, polished.rounds) == ("time_limit", 0)
    np.testing.assert_array_equal(polished.solution, start)


@pytest.mark.parametrize(("loss", "l1", "l2"), [("logistic", 0.0, 0.0), ("squared", 0.0, 0.0),
                                                ("quadratic", 0.0, 0.0), ("hinge", 0.1, 0.0),
                                                ("hinge", 0.0, 0.1)])
def test_problems_other_than_the_hinge_lp_are_not_polished(loss, l1, l2):
    problem = random_problem(loss, "ordering", l1=l1, l2=l2)
    assert polish(problem, np.zeros(problem.d), later(), 1e-3) is None


def test_the_radius_lets_that_many_examples_off_the_kink_reach_it():
    margins = np.array([1.0, 1.0, 0.5, 1.2, 2.0, -1.0, 7.0])
    reach = np.array([1.0, 2.0, 1.0, 0.4, 2.0, 1.0, 0.0])   # the last one never moves
    # slacks off the kink: 0.5, 0.5, 0.5, 2.0
    assert trust_radius(margins, reach, 2) == pytest.approx(0.5)
    assert trust_radius(margins, reach, 3) == pytest.approx(0.5)
    assert trust_radius(margins, reach, 4) == math.inf
    assert trust_radius(margins, reach, 5) == math.inf


def test_a_side_of_the_trust_region_counts_only_inside_the_box():
    lower, upper = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    center = np.array([0.0, 0.95])
    assert on_trust_side(np.array([0.1, 0.95]), center, 0.1, lower, upper)
    assert not on_trust_side(np.array([0.05, 1.0]), center, 0.1, lower, upper)   # box side
    assert not on_trust_side(np.array([0.05, 0.9]), center, 0.1, lower, upper)
    assert not on_trust_side(np.array([5.0, 5.0]), center, math.inf, lower, upper)


def test_the_remaining_excess_follows_the_rounds_contraction():
    assert remaining_estimate([0.4]) == math.inf
    assert remaining_estimate([0.4, 0.2]) == pytest.approx(0.2)           # rate 1/2
    assert remaining_estimate([0.4, 0.3]) == pytest.approx(0.9)           # rate 3/4
    assert remaining_estimate([0.1, 0.2]) == pytest.approx(0.2 * 9)       # capped at 0.9
    assert remaining_estimate([0.0, 0.0]) == 0.0
    # a lucky small round does not hide the slower rate before it: rate 3/4, not 1/3
    assert remaining_estimate([0.4, 0.3, 0.1]) == pytest.approx(0.3)


def test_the_algorithm_gets_its_share_of_the_time_limit_and_a_looser_tolerance():
    options = algorithm_options(SolverOptions(algorithm="lighttouch", time_limit_s=60.0,
                                              tolerance=1e-3))
    assert options.time_limit_s == ALGORITHM_SHARE * 60.0
    assert options.tolerance == pytest.approx(ALGORITHM_TOLERANCE * 1e-3)
    assert algorithm_options(SolverOptions(tolerance=0.2)).tolerance == 0.5


def test_a_solve_polishes_to_the_optimum_and_can_be_told_not_to(tmp_path):
    spec = hinge_spec(tmp_path, 2_000)
    reports = []
    result = solve(spec, reports.append, roots=[tmp_path])
    stats = result.stats
    assert (stats["polish_status"], stats["polish_rounds"]) == ("optimal", 1)
    assert stats["polish_examples"] == 300 and stats["polish_s"] > 0
    polished = [member for member in result.mixture if member.kind == "polished"]
    assert len(polished) == 1 and polished[0].iteration == 2_000
    last = reports[-1]                                  # the polish reports its rounds
    assert last.iteration == 2_000
    assert last.objective == pytest.approx(polished[0].objective, rel=1e-12)
    assert last.max_violation <= 1e-9
    # linear constraints: the mixture's mean is feasible and no worse than its members
    assert result.expected.objective <= polished[0].objective + 1e-9
    assert result.projected.objective == pytest.approx(stats["lower_bound"], abs=1e-7)
    assert result.projected.max_violation <= 1e-9
    plain = solve(dict(spec, solver=dict(spec["solver"], polish=False)), roots=[tmp_path])
    assert not any(key.startswith("polish") for key in plain.stats)
    assert "polished" not in {member.kind for member in plain.mixture}
    assert plain.projected.objective > result.projected.objective + 1e-6


def test_steps_held_back_by_the_trust_region_widen_it():
    problem = random_problem("hinge", "ordering", d=8, n=400, seed=4)
    optimum, _ = exact(problem)
    polished = polish(problem, feasible_start(problem, 4, 3.0), later(), 1e-12, examples=10)
    assert polished.status == "optimal"
    assert polished.objective == pytest.approx(optimum, abs=1e-6)
    assert polished.examples > 2 * 10              # the first LP's 10 were doubled, twice
