"""``eta_w: "auto"`` for the games' theta-player against the exact optimum, whatever the
features' units: the Lagrangian game on a rate constraint whose hinge relaxation is convex."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from worker import solve

#: Positive prediction rate of the group, relaxed by the hinge, at most this.
RATE = 0.7


def rate_problem(seed: int = 0, n: int = 600, d: int = 6) -> tuple[np.ndarray, ...]:
    """Features (n, d) with an intercept column, ±1 labels (n,), a 0/1 group (n,)."""
    rng = np.random.default_rng(seed)
    x = np.hstack([rng.normal(size=(n, d - 1)), np.ones((n, 1))])
    y = np.where(x[:, :-1] @ rng.normal(size=d - 1) + 0.3 + 0.5 * rng.normal(size=n) > 0,
                 1.0, -1.0)
    return x, y, (rng.uniform(size=n) < 0.4).astype(np.float64)


def relaxed_optimum(x: np.ndarray, y: np.ndarray, group: np.ndarray) -> float:
    """min mean hinge s.t. mean over the group of max(0, 1 + x.w) <= RATE, by Clarabel."""
    w = cp.Variable(x.shape[1])
    scores = x[group > 0] @ w
    problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, x @ w))) / y.size),
                         [cp.sum(cp.pos(1 + scores)) / scores.shape[0] <= RATE])
    return problem.solve(solver=cp.CLARABEL)


def lagrangian(tmp_path, x, y, group, **solver) -> dict:
    """The Lagrangian game's stats on the data, with ``solver`` settings over the defaults."""
    for name, array in {"x": x, "y": y, "group": group}.items():
        np.save(tmp_path / f"{name}.npy", array)
    data = {"features": {"uri": (tmp_path / "x.npy").as_uri()},
            "labels": {"uri": (tmp_path / "y.npy").as_uri()},
            "groups": {"g": {"uri": (tmp_path / "group.npy").as_uri()}}}
    spec = {"objective": {"type": "empirical_risk", "loss": "hinge", "data": data},
            "constraints": [{"type": "rate", "op": "<=", "rhs": RATE,
                             "lhs": {"metric": "positive_prediction_rate", "group": "g"}}],
            "solver": {"algorithm": "lagrangian", "iterations": 5000, **solver},
            "output": {"project": False}}
    return solve(spec, roots=[tmp_path]).stats


@pytest.mark.parametrize("scale", [0.01, 1.0, 100.0])
def test_the_theta_players_auto_step_reaches_the_optimum_in_any_units(tmp_path, scale):
    x, y, group = rate_problem()
    optimum = relaxed_optimum(x, y, group)       # the same at every scale: w scales by 1/c
    stats = lagrangian(tmp_path, x * scale, y, group)
    assert stats["eta_w_warmup"] == "dog" and stats["warmup_iterations"] == 5000 // 16
    assert stats["baseline_objective"] <= optimum * 1.03, (stats["baseline_objective"], optimum)
    assert stats["baseline_objective"] >= optimum * 0.99
    assert stats["baseline_relaxed_max_violation"] <= 5e-3
    # the theta-player's diameter scales as 1 / c, as the optimum does
    assert 0.5 <= stats["theta_diameter"] * scale <= 5.0, stats["theta_diameter"]


def test_a_fixed_theta_step_is_used_as_is_and_depends_on_the_units(tmp_path):
    x, y, group = rate_problem()
    optimum = relaxed_optimum(x, y, group)
    stats = lagrangian(tmp_path, x * 0.01, y, group, eta_w=1.0)
    assert "theta_diameter" not in stats
    assert stats["baseline_objective"] > optimum * 1.2
