"""Every method on a weighted objective (``objective.data.weights``) against CVXPY's
(Clarabel's) optimum of sum_i c_i loss_i / sum_i c_i, and integer weights against the same
rows repeated."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.algorithms.test_registry import ITERATIONS, TOLERANCE
from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.algorithms.registry import ALGORITHMS

#: The losses of one linear objective the exact programs take, each with its method.
EXACT = [("hinge", "exact_qp"), ("squared_hinge", "exact_qp"), ("squared", "exact_qp"),
         ("logistic", "exact_conic"), ("pairwise_hinge", "exact_qp")]


def weighted(spec: dict, seed: int, integer: bool = False) -> dict:
    """``spec`` with weights on its examples: fractional in [0, 3) with a few zeros, or
    integers 0..3."""
    spec = copy.deepcopy(spec)
    data = spec["objective"]["data"]
    n = len(data["features"] if "features" in data else data["positive"])
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, 4, n).astype(float) if integer else rng.uniform(0.0, 3.0, n)
    weights[rng.choice(n, 4, replace=False)] = 0.0
    data["weights"] = weights.tolist()
    return spec


def repeated(spec: dict) -> dict:
    """``spec`` with each example repeated by its integer weight, and no weights."""
    spec = copy.deepcopy(spec)
    data = spec["objective"]["data"]
    counts = np.asarray(data.pop("weights"), dtype=np.int64)
    for key in ("features", "labels", "positive", "negative"):
        if key in data:
            data[key] = np.repeat(np.asarray(data[key]), counts, axis=0).tolist()
    return spec


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_method_reaches_the_weighted_optimum(name):
    constraints = "none" if name == "lbfgsb" else "ordering_chain"
    spec = weighted(random_spec("squared", constraints, 2, l2=0.5,
                                iterations=ITERATIONS.get(name, 5000)), 5)
    spec["solver"]["algorithm"] = name
    optimum, _ = exact_optimum(spec)
    unweighted, _ = exact_optimum(random_spec("squared", constraints, 2, l2=0.5))
    result = solve(spec)
    assert result.algorithm == name and result.projected.status == "optimal"
    gap = (result.projected.objective - optimum) / abs(optimum)
    assert -1e-7 <= gap <= TOLERANCE[name]
    assert abs(unweighted - optimum) > 10 * TOLERANCE[name] * abs(optimum)  # weights matter


@pytest.mark.parametrize(("loss", "method"), EXACT)
def test_the_exact_programs_weigh_every_loss(loss, method):
    spec = weighted(random_spec(loss, "mixed", 11), 3)
    spec["solver"]["algorithm"] = method
    optimum, _ = exact_optimum(spec)
    result = solve(spec)
    assert result.projected.objective == pytest.approx(optimum, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize(("loss", "method"), [("hinge", "lighttouch"),
                                              ("logistic", "proxy_lagrangian")])
def test_sampling_methods_weigh_nonsmooth_and_smooth_losses(loss, method):
    spec = weighted(random_spec(loss, "ordering_chain", 4, iterations=40_000), 8)
    spec["solver"]["algorithm"] = method
    optimum, _ = exact_optimum(spec)
    result = solve(spec)
    assert -1e-7 <= (result.projected.objective - optimum) / abs(optimum) <= 1e-2


@pytest.mark.parametrize(("loss", "method"), [("hinge", "exact_qp"),
                                              ("logistic", "exact_conic"),
                                              ("squared", "lbfgsb")])
def test_integer_weights_give_the_optimum_of_repeated_rows(loss, method):
    constraints = "none" if method == "lbfgsb" else "linear"
    spec = weighted(random_spec(loss, constraints, 6, l2=0.1), 9, integer=True)
    spec["solver"]["algorithm"] = method
    with_weights, rows = solve(spec), solve(repeated(spec))
    assert with_weights.projected.objective == pytest.approx(rows.projected.objective,
                                                             rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(with_weights.projected.solution, rows.projected.solution,
                               atol=1e-4)


def test_the_hinge_bound_and_polish_hold_under_weights():
    spec = weighted(random_spec("hinge", "ordering_chain", 12, iterations=3000), 2)
    spec["solver"]["algorithm"] = "lighttouch"
    optimum, _ = exact_optimum(spec)
    result = solve(spec)
    bound = result.stats["lower_bound"]
    assert bound <= optimum + 1e-7
    assert bound >= optimum - 1e-3 * abs(optimum)
    assert result.projected.objective >= optimum - 1e-7
