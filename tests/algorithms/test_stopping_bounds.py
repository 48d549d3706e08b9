"""A known lower bound on a games' objective caps the stopping estimate: on a loss falling
geometrically towards 0 the run stops once the loss itself is within tolerance of 0."""

from __future__ import annotations

import math

import numpy as np

from worker import solve
from worker.algorithms.run.stopping import SnapshotBound, StageEstimate
from worker.algorithms.runners import network_games
from worker.algorithms.runners.games import FIRST_STAGE


def stops_at(values: list[float], lower: float) -> int | None:
    """The stage (0-based) at which the games' estimate stops on ``values``, or None."""
    estimate = StageEstimate(1e-3, 1.0, two_sided=True, lower=lower)
    for stage, value in enumerate(values):
        if estimate.converged(value):
            return stage
    return None


def test_a_halving_loss_stops_once_it_is_within_tolerance_of_its_lower_bound():
    values = [0.08 / 2**k for k in range(10)]       # 0.08, 0.04, ..., 0.00016
    assert stops_at(values, 0.0) == 7               # 0.000625 <= 1e-3 < 0.00125
    # without the bound the last improvement times 1 / (sqrt(2) - 1) decides: 0.00016 * 2.41
    assert stops_at(values, -math.inf) == 9
    assert stops_at(values[:9], -math.inf) is None


def test_the_bound_does_not_stop_a_loss_far_above_it():
    # a loss still falling by 0.01 a stage at 0.5: neither the estimate nor the bound is small
    assert stops_at([0.53, 0.52, 0.51, 0.50], 0.0) is None
    # a flat loss stops on the estimate, as without a bound
    assert stops_at([0.5, 0.5, 0.5], 0.0) == stops_at([0.5, 0.5, 0.5], -math.inf) == 2


def mlp_spec() -> dict:
    """A separable problem for a small MLP by the games (``auto`` would take L-BFGS-B), every
    other solver setting by default."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = np.where(x[:, 0] + x[:, 1] * x[:, 2] > 0, 1.0, -1.0)
    return {"model": {"type": "mlp", "hidden": [8]},
            "objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": x.tolist(), "labels": y.tolist()}},
            "solver": {"algorithm": "lagrangian"}}


def test_an_mlp_with_defaults_stops_earlier_within_tolerance_of_the_longer_run(monkeypatch):
    bounded = solve(mlp_spec())
    monkeypatch.setattr(network_games, "OBJECTIVE_LOWER", -math.inf)
    unbounded = solve(mlp_spec())
    assert bounded.stats["stopped_by"] == unbounded.stats["stopped_by"] == "converged"
    assert bounded.stats["iterations"] < unbounded.stats["iterations"]
    assert bounded.expected.objective <= 1e-3
    assert abs(bounded.expected.objective - unbounded.expected.objective) <= 1e-3


def test_the_bound_at_a_snapshot_stops_between_a_stages_ends():
    result = solve(mlp_spec())
    stage_ends = {FIRST_STAGE * 2**k for k in range(20)}
    assert result.stats["stopped_by"] == "converged"
    assert result.stats["bound_checks"] >= 1
    assert result.stats["iterations"] not in stage_ends
    assert result.expected.objective <= 1e-3


def test_a_snapshot_bound_tests_the_point_alone_and_within_its_share_of_time():
    seen = []

    def value(points: np.ndarray, weights: np.ndarray) -> tuple[float, float, float]:
        seen.append(points.shape)
        return float(points[0, 0]), float(points[0, 1]), 0.0

    bound = SnapshotBound(value, 0.0, 1e-3, 1.0, 0.01)
    assert bound.holds(np.array([5e-4, 0.0]), run_s=1.0)
    assert not bound.holds(np.array([2e-3, 0.0]), run_s=1.0)     # loss above the tolerance
    assert not bound.holds(np.array([5e-4, 0.02]), run_s=1.0)    # violation above its limit
    assert seen == [(1, 2)] * 3 and bound.checks == 3
    bound.spent_s = 1.0                                           # its share is spent
    assert not bound.holds(np.array([0.0, 0.0]), run_s=1.0)
    assert bound.checks == 3 and len(seen) == 3
