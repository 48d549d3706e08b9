"""``iterations: "auto"`` stops on its own on every path, near CVXPY's exact optimum, and the
certificates it reports are valid lower bounds (below the exact optimum)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from tests.specs import exact_optimum, random_spec, robust_terms
from worker import solve
from worker.algorithms.bounds.certificate import box_minimum, certify, strong_convexity
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.stopping import StageEstimate
from worker.algorithms.runners.network_games import new_state
from worker.kernels.layout import GRADIENT_SUM, RADIUS
from worker.kernels.network_game import _dog_step
from worker.kernels.objective import loss_spread
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

#: Stopped by the rule, not the budget (``optimal``: ``auto``'s exact method on a small
#: program, docs/method-choice.md).
OPEN_ENDED = ("certificate", "converged", "optimal")


def defaults_only(spec: dict, **solver) -> dict:
    """The spec with no iteration budget: ``iterations: "auto"``, the default."""
    spec["solver"] = {"seed": spec["solver"]["seed"], **solver}
    return spec


def assert_stops_near(spec: dict, within: float = 1e-2) -> dict:
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    stats = result.stats
    assert stats["stopped_by"] in OPEN_ENDED, stats
    assert result.projected.max_violation <= 1e-6
    gap = result.projected.objective - optimum
    assert -1e-6 * max(1.0, abs(optimum)) <= gap <= within * max(abs(optimum), 0.1), (
        result.projected.objective, optimum, stats)
    if "dual_bound" in stats:                      # a certificate is a valid bound
        assert stats["dual_bound"] <= optimum + 1e-7 * max(1.0, abs(optimum))
    return stats


@pytest.mark.parametrize("seed", [0, 1])
def test_a_quadratic_stops_on_its_certificate(seed):
    spec = random_spec("quadratic", "linear", seed, d=10)   # auto: exact_qp on so small a QP
    stats = assert_stops_near(defaults_only(spec, algorithm="lighttouch"))
    assert stats["stopped_by"] == "certificate" and stats["certified_gap"] <= 1e-3


@pytest.mark.parametrize("algorithm", ["auto", "lighttouch", "midtouch"])
def test_a_smooth_logistic_stops(algorithm):
    spec = random_spec("logistic", "linear", 4, l2=0.05 if algorithm == "midtouch" else 0.0)
    assert_stops_near(defaults_only(spec, algorithm=algorithm))


@pytest.mark.parametrize("algorithm", ["epro_sgd", "epro_orda"])
def test_epro_stops(algorithm):
    spec = random_spec("squared", "mixed", 5, l2=0.1, l1=0.01 if algorithm == "epro_orda"
                       else 0.0)
    assert_stops_near(defaults_only(spec, algorithm=algorithm))


def test_svrg_ol_ends_its_schedule_early_when_it_holds_the_rows():
    spec = defaults_only(random_spec("logistic", "linear", 4, n=400), algorithm="svrg_ol")
    stats = assert_stops_near(spec)
    assert stats["communication_rounds"] < stats["rounds_planned"]


def test_a_game_stops_near_the_optimum():
    spec = defaults_only(random_spec("logistic", "linear", 6), algorithm="lagrangian")
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    assert result.stats["stopped_by"] == "converged", result.stats
    assert result.expected.max_violation <= 1e-6
    assert optimum - 1e-6 <= result.expected.objective <= optimum + 1e-2 * abs(optimum)


def test_a_rising_game_objective_is_not_convergence():
    """The stage mixtures' objectives of Adult's 12 parity constraints at eta_lambda 1.0
    (hinge; 1,024 .. 8,192 iterations): the multipliers were still taking weight from the
    objective, which rose by 9%. A one-sided estimate reads no improvement left and stops;
    the games' two-sided one does not."""
    values = [0.44740, 0.43697, 0.47578, 0.48857]
    one_sided, two_sided = StageEstimate(0.011), StageEstimate(0.011, two_sided=True)
    assert [one_sided.converged(v) for v in values][-1]
    assert not any(two_sided.converged(v) for v in values)
    assert two_sided.gap == pytest.approx((0.47578 - 0.43697) / 0.48857 / (2 ** 0.5 - 1))
    settled = StageEstimate(0.011, two_sided=True)
    assert [settled.converged(v) for v in (0.35, 0.341, 0.3412, 0.3411)][-1]


def test_a_robust_problem_stops_within_one_percent_of_the_min_max():
    terms = robust_terms(0)
    w, t = cp.Variable(terms[0][0].shape[1]), cp.Variable()
    cp.Problem(cp.Minimize(t), [cp.sum(cp.logistic(-cp.multiply(y, x @ w))) / y.size <= t
                                for x, y in terms]).solve(solver=cp.CLARABEL)
    result = solve({"objective": {"type": "max_of", "terms": [
        {"type": "empirical_risk", "loss": "logistic",
         "data": {"features": x.tolist(), "labels": y.tolist()}} for x, y in terms]},
        "solver": {"algorithm": "lagrangian"}})      # auto solves this small one exactly
    assert result.stats["stopped_by"] == "converged", result.stats
    assert result.stats["eta_w_warmup"] == "dog"
    assert t.value - 1e-6 <= result.expected.objective <= 1.01 * t.value


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "squared", "quadratic"])
@pytest.mark.parametrize("seed", range(3))
def test_the_dual_bound_is_below_the_optimum_anywhere(loss, seed):
    spec = random_spec(loss, "linear", seed, d=6, l1=0.02 * seed, l2=0.1 * (seed == 2))
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    arrays = problem_arrays(problem, problem.m)
    optimum, solution = exact_optimum(spec)
    rng = np.random.default_rng(seed)
    for point in (solution, rng.uniform(-1, 1, size=problem.d), np.zeros(problem.d)):
        found = certify(arrays, problem, point, strong_convexity(problem), 0.0)
        assert found.lower <= optimum + 1e-7 * max(1.0, abs(optimum)), (found, optimum)
        assert found.upper >= optimum - 1e-7 * max(1.0, abs(optimum))
    at_optimum = certify(arrays, problem, solution, strong_convexity(problem), 0.0)
    if seed == 0:                                # tight at a KKT point of a smooth problem
        assert at_optimum.gap <= 1e-3, at_optimum


@pytest.mark.parametrize("sigma", [0.0, 0.5])
@pytest.mark.parametrize("l1", [0.0, 0.3])
def test_box_minimum_matches_a_fine_grid(sigma, l1):
    rng = np.random.default_rng(3)
    v = rng.uniform(-1, 1, size=20)
    slope = rng.normal(size=20)
    lower, upper = np.full(20, -1.0), np.full(20, 1.0)
    grid = np.linspace(-1, 1, 200_001)[:, None]
    delta = grid - v
    brute = (slope * delta + 0.5 * sigma * delta**2 + l1 * (np.abs(grid) - np.abs(v))).min(0)
    found = box_minimum(v, slope, sigma, l1, lower, upper)
    assert np.all(found <= brute + 1e-12) and np.allclose(found, brute, atol=1e-8)


def test_no_certificate_is_tried_for_a_hinge_loss():
    spec = random_spec("hinge", "linear", 0, d=6)
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    arrays = problem_arrays(problem, problem.m)
    assert certify(arrays, problem, np.zeros(problem.d), 0.0, 0.0) is None


def test_box_minimum_is_unbounded_towards_an_infinite_end_without_curvature():
    found = box_minimum(np.zeros(3), np.array([1.0, -1.0, 0.0]), 0.0, 0.0,
                        np.full(3, -np.inf), np.full(3, np.inf))
    assert found[0] == -np.inf and found[1] == -np.inf and found[2] == 0.0


def test_loss_spread_is_the_standard_deviation_of_the_losses():
    spec = random_spec("logistic", "linear", 2)
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    arrays = problem_arrays(problem, problem.m)
    w = np.random.default_rng(2).normal(size=problem.d)
    scores = problem.objective.features @ w
    losses = np.logaddexp(0.0, -problem.objective.labels * scores)
    assert loss_spread(arrays, w) == pytest.approx(losses.std(ddof=1), rel=1e-10)


def test_the_network_dog_step_matches_numpy():
    rng = np.random.default_rng(4)
    theta = rng.normal(size=6)
    state = new_state(theta.copy(), 0.0, 0, 0, 1, 0)
    lower, upper = np.full(6, -1.5), np.full(6, 1.5)
    origin, radius, squares = theta.copy(), state.scalars[RADIUS], 0.0
    for _ in range(20):
        direction = rng.normal(size=6) * rng.uniform(0.1, 3.0)
        state.direction[:] = direction
        _dog_step(state, lower, upper)
        squares += direction @ direction
        theta = np.clip(theta - radius / np.sqrt(squares) * direction, lower, upper)
        radius = max(radius, np.linalg.norm(theta - origin))
        np.testing.assert_allclose(state.theta, theta, rtol=1e-12, atol=1e-14)
        assert state.scalars[RADIUS] == pytest.approx(radius, rel=1e-12)
        assert state.scalars[GRADIENT_SUM] == pytest.approx(squares, rel=1e-12)
