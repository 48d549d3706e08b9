"""Epro-SGD (Epro paper, Algorithm 1): kernel vs numpy reference, epochs, exact optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import reference
from tests.problems import random_problem
from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.algorithms.method_choice import iterative_method
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.runners.epro import FIRST_EPOCH, epoch_lengths
from worker.kernels.epro import epro_sgd_steps
from worker.kernels.layout import CHECKS, GRADIENT_SAMPLES, ITERATION, N_COUNTERS
from worker.kernels.random import seed_state


def reference_epoch(problem, w, *, eta, penalty, k_f, steps, seed):
    """Algorithm 1, lines 4-8, in dense numpy: (final iterate, sum of x_1..x_T)."""
    rng = reference.Xoroshiro(seed)
    o = problem.objective
    x = o.features.toarray()
    total = np.zeros_like(w)
    for _ in range(steps):
        total += w
        grad = reference.sampled_loss_gradient(problem, x, w, rng, k_f)
        grad = grad + o.l2 * w + o.l1 * np.sign(w) + reference.penalty_subgradient(
            problem, w, penalty)
        w = np.clip(w - eta * grad, problem.lower, problem.upper)
    return w, total


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "quadratic"])
@pytest.mark.parametrize("constraint", ["linear", "ordering"])
def test_epro_kernel_matches_reference(loss, constraint):
    problem = random_problem(loss, constraint, d=8, l2=0.3, l1=0.2)
    arrays = problem_arrays(problem, 1)
    w, total, direction = np.zeros(8), np.zeros(8), np.zeros(8)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    epro_sgd_steps(arrays, w, total, direction, 0.2, 3.0, 3, seed_state(5), counters, 150)
    expected_w, expected_total = reference_epoch(problem, np.zeros(8), eta=0.2, penalty=3.0,
                                                 k_f=3, steps=150, seed=5)
    np.testing.assert_allclose(w, expected_w, rtol=0, atol=1e-11)
    np.testing.assert_allclose(total, expected_total, rtol=0, atol=1e-10)
    assert counters[CHECKS] == 150 * problem.m
    assert counters[GRADIENT_SAMPLES] == (150 if loss == "quadratic" else 450)


@given(st.integers(1, 10**7), st.integers(1, 64))
def test_epochs_double_and_use_the_budget(iterations, first):
    lengths = epoch_lengths(iterations, first)
    assert sum(lengths) == iterations
    if iterations >= first:
        assert len(lengths) == math.floor(math.log2(iterations / first + 1))
        assert lengths[:-1] == [first * 2**k for k in range(len(lengths) - 1)]
    assert len(lengths) <= max(1, math.ceil(math.log2(iterations / first + 1)))


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "quadratic"])
@pytest.mark.parametrize("constraints", ["mixed", "linear"])
def test_epro_sgd_reaches_the_exact_optimum_with_log_projections(loss, constraints):
    iterations = 200_000
    spec = random_spec(loss, constraints, 7, l2=0.5, iterations=iterations)
    spec["solver"]["algorithm"] = "epro_sgd"
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    assert result.projected is not None and result.projected.max_violation <= 1e-6
    assert abs(result.projected.objective - optimum) <= 1e-2 * abs(optimum)
    assert result.expected.max_violation <= 1e-6
    assert result.stats["projections"] <= math.ceil(math.log2(iterations / FIRST_EPOCH + 1))
    assert 1 <= len(result.mixture) <= result.sizes.constraints + 1


def test_epro_sgd_needs_strong_convexity():
    spec = random_spec("hinge", "linear", 1, iterations=100)
    spec["solver"]["algorithm"] = "epro_sgd"
    with pytest.raises(Exception, match="objective.l2 > 0"):
        solve(spec)


def test_the_family_picks_epro_for_strongly_convex_problems_with_few_constraints():
    few = random_problem("logistic", "ordering", d=6, l2=0.1, seed=2)
    assert few.m <= 16 and iterative_method(few) == "epro_sgd"
    assert iterative_method(random_problem("logistic", "ordering", d=6, seed=2)) == "fulltouch"
    many = random_problem("logistic", "linear", d=12, l2=0.1)
    assert many.m > 16 and iterative_method(many) == "lighttouch"
