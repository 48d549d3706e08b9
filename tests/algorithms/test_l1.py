"""The objective's l1 term: values, the dense LightTouch path, and every algorithm against
the exact solver (CVXPY + Clarabel) on small problems with l1 > 0."""

from __future__ import annotations

import numpy as np
import pytest

from tests import reference
from tests.kernels.test_kernels import compiled_run
from tests.problems import random_problem
from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.kernels.layout import MODE_FULL, MODE_LIGHT
from worker.kernels.objective import objective_value

#: Algorithms that need l2 > 0 (their theorems assume strong convexity).
STRONGLY_CONVEX_ONLY = ("midtouch", "epro_sgd", "epro_orda")
ALGORITHMS = ("fulltouch", "lighttouch", "midtouch", "epro_sgd", "epro_orda", "lagrangian",
              "proxy_lagrangian", "svrg_ol")


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "quadratic"])
def test_objective_value_includes_l1(loss):
    problem = random_problem(loss, "linear", d=6, l2=0.3, l1=0.7)
    w = np.random.default_rng(0).normal(size=6)
    value = objective_value(problem_arrays(problem, 1), w)
    assert value == pytest.approx(reference.objective(problem, w), rel=1e-12)
    without = random_problem(loss, "linear", d=6, l2=0.3)
    assert value - objective_value(problem_arrays(without, 1), w) == pytest.approx(
        0.7 * np.abs(w).sum(), rel=1e-12)


@pytest.mark.parametrize(("mode", "name"), [(MODE_LIGHT, "light"), (MODE_FULL, "full")])
@pytest.mark.parametrize("loss", ["hinge", "squared"])
def test_l1_takes_the_dense_step_and_matches_reference(mode, name, loss):
    problem = random_problem(loss, "linear", d=8, l1=0.2)  # l2 = 0: the sparse path without l1
    _, _, _, iterates = compiled_run(problem, mode=mode, iterations=150, groups=problem.m,
                                     minibatch=(2, 3, 2), lazy=False)
    expected = reference.run(problem, mode=name, iterations=150, gamma=2.0, eta_w=0.5,
                             eta_p=0.25, minibatch=(2, 3, 2), groups=problem.m, seed=3)
    np.testing.assert_allclose(iterates, expected["iterates"], rtol=0, atol=1e-10)


def assert_within_one_percent(spec: dict) -> None:
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    assert result.projected is not None and result.projected.max_violation <= 1e-6
    assert result.projected.objective - optimum <= 1e-2 * abs(optimum), (
        result.projected.objective, optimum)
    assert result.projected.objective - optimum >= -1e-6 * max(1.0, abs(optimum))


#: (loss, constraints, l2) x algorithm; with l2 = 0 only the algorithms that accept it
#: (the others refuse it with a SpecError, tested for epro_orda).
CASES = [(problem, algorithm)
         for problem in [("logistic", "mixed", 0.5), ("hinge", "ordering_pairs", 0.1),
                         ("squared", "linear", 0.0)]
         for algorithm in ALGORITHMS
         if problem[2] > 0 or algorithm not in STRONGLY_CONVEX_ONLY]


@pytest.mark.parametrize(("problem", "algorithm"), CASES)
def test_every_algorithm_reaches_the_l1_optimum(problem, algorithm):
    loss, constraints, l2 = problem
    spec = random_spec(loss, constraints, 3, l2=l2, l1=0.1, iterations=60_000)
    spec["solver"]["algorithm"] = algorithm
    assert_within_one_percent(spec)


def test_projected_sgd_reaches_the_l1_optimum():
    spec = random_spec("hinge", "ordering_chain", 3, l2=0.1, l1=0.1, iterations=5_000)
    spec["solver"]["algorithm"] = "projected_sgd"
    assert_within_one_percent(spec)
