"""Epro-ORDA (Epro paper, Algorithms 2-3): kernel vs numpy reference, exact optimum with
log T projections, exact zeros of a sparse optimum, reproducibility, the auto rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests import orda_reference
from tests.problems import random_problem
from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.algorithms.method_choice import iterative_method
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.runners.epro_orda import FIRST_EPOCH
from worker.errors import SpecError
from worker.kernels.layout import CHECKS, GRADIENT_SAMPLES, ITERATION, N_COUNTERS
from worker.kernels.orda import OrdaState, orda_steps
from worker.kernels.random import seed_state


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "quadratic"])
@pytest.mark.parametrize("constraint", ["linear", "ordering"])
def test_orda_kernel_matches_reference_step_by_step(loss, constraint):
    problem = random_problem(loss, constraint, d=8, l2=0.3, l1=0.2)
    arrays = problem_arrays(problem, 1)
    start = np.clip(np.random.default_rng(1).normal(scale=0.5, size=8), -1, 1)
    state = OrdaState(x=start.copy(), z=start.copy(), start=start.copy(), dual=np.zeros(8),
                      direction=np.zeros(8))
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 40  # the epoch's t = 1 is the run's iteration 40
    rng = seed_state(5)
    iterates = [state.x.copy()]
    for _ in range(150):
        orda_steps(arrays, state, 0.7, 3.0, 3, rng, counters, 40, 1)
        iterates.append(state.x.copy())
    expected = orda_reference.orda(problem, start, eta=0.7, penalty=3.0, k_f=3, steps=150,
                                   seed=5)
    np.testing.assert_allclose(np.array(iterates), expected["iterates"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(state.z, expected["z"], rtol=0, atol=1e-10)
    assert counters[ITERATION] == 190
    assert counters[CHECKS] == 150 * problem.m
    assert counters[GRADIENT_SAMPLES] == (150 if loss == "quadratic" else 450)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "quadratic"])
@pytest.mark.parametrize("constraints", ["none", "linear", "ordering_chain", "mixed"])
def test_epro_orda_reaches_the_exact_optimum_with_log_projections(loss, constraints):
    iterations = 100_000
    spec = random_spec(loss, constraints, 5, l2=0.5, l1=0.2, iterations=iterations)
    spec["solver"]["algorithm"] = "epro_orda"
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    assert result.projected is not None and result.projected.max_violation <= 1e-6
    assert abs(result.projected.objective - optimum) <= 1e-2 * abs(optimum)
    assert result.stats["projections"] == result.stats["epochs"]
    assert result.stats["projections"] <= math.ceil(math.log2(iterations / FIRST_EPOCH + 1))
    assert result.stats["iterations"] == iterations


def sparse_spec(seed: int, *, iterations: int = 50_000) -> dict:
    """A hinge-loss classifier whose optimum is zero on its last half of coordinates, with a
    margin: those features are at most 0.05 in magnitude, so every example's loss gradient
    there stays below l1 = 0.1 (ORDA's x-step thresholds the gradient of its last example,
    not an average), and no constraint involves them. The first half carries the signal."""
    rng = np.random.default_rng(seed)
    n, half = 200, 5
    signal = rng.normal(size=(n, half))
    x = np.hstack([signal, rng.uniform(-0.05, 0.05, size=(n, half))])
    truth = rng.choice([-1.0, 1.0], size=half) * rng.uniform(1.0, 2.0, size=half)
    y = np.where(signal @ truth + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    a = np.hstack([rng.normal(size=(3, half)), np.zeros((3, half))])
    b = a @ rng.uniform(-0.1, 0.1, size=2 * half) + 0.02
    return {"dimension": 2 * half, "bounds": {"lower": -1.0, "upper": 1.0},
            "objective": {"type": "empirical_risk", "loss": "hinge", "l1": 0.1, "l2": 0.2,
                          "data": {"features": x.tolist(), "labels": y.tolist()}},
            "constraints": [{"type": "linear", "A": a.tolist(), "b": b.tolist()}],
            "solver": {"algorithm": "epro_orda", "iterations": iterations, "seed": seed}}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_epro_orda_gives_exact_zeros_where_the_optimum_is_zero(seed):
    spec = sparse_spec(seed)
    optimum, exact = exact_optimum(spec)
    zero = np.abs(exact) < 1e-7
    assert zero[5:].all()
    result = solve(spec)
    solution = np.array(result.projected.solution)
    assert np.all(solution[zero] == 0.0), solution[zero]
    assert result.stats["zeros"] >= zero.sum()
    assert abs(result.projected.objective - optimum) <= 1e-2 * abs(optimum)
    assert result.projected.max_violation <= 1e-6


def test_epro_orda_is_reproducible():
    spec = random_spec("logistic", "mixed", 4, l2=0.3, l1=0.1, iterations=20_000)
    spec["solver"]["algorithm"] = "epro_orda"
    first, second = solve(spec), solve(spec)
    assert first.projected.solution == second.projected.solution
    assert [m.solution for m in first.mixture] == [m.solution for m in second.mixture]
    spec["solver"]["seed"] += 1
    assert solve(spec).projected.solution != first.projected.solution


def test_epro_orda_needs_strong_convexity():
    spec = random_spec("hinge", "linear", 1, l1=0.1, iterations=100)
    spec["solver"]["algorithm"] = "epro_orda"
    with pytest.raises(SpecError, match="epro_orda needs a strongly convex objective; set "
                                        "objective.l2 > 0"):
        solve(spec)


def test_the_family_picks_epro_orda_for_l1_with_strong_convexity_and_few_constraints():
    def problem(**weights):
        return random_problem("logistic", "ordering", d=6, seed=2, **weights)

    assert problem().m <= 16
    assert iterative_method(problem(l2=0.1, l1=0.05)) == "epro_orda"
    assert iterative_method(problem(l2=0.1)) == "epro_sgd"
    assert iterative_method(problem(l1=0.05)) == "fulltouch"
    many = random_problem("logistic", "linear", d=12, l2=0.1, l1=0.05)
    assert many.m > 16 and iterative_method(many) == "lighttouch"
