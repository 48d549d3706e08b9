"""Group-loss constraints on an MLP: the games' mixture meets the bound the unconstrained
network breaks, measured by the mixture's own scores, and ``auto`` says why it plays them."""

from __future__ import annotations

import numpy as np

from worker import solve
from worker.mixture import Mixture

N = 240


def data(seed: int = 5):
    """Two features and a bias-free XOR-like label (an MLP's), with a group whose rows are
    the noisier half of the plane."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, 2))
    group = (x[:, 0] > 0.4).astype(float)
    y = np.where(x[:, 0] * x[:, 1] + 0.6 * rng.normal(size=N) * (1 + group) > 0, 1.0, -1.0)
    return x, y, group


def spec(x, y, group, constraints) -> dict:
    return {"model": {"type": "mlp", "hidden": [8], "init_seed": 2},
            "objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": {"g": group.tolist()}}},
            "constraints": constraints,
            "solver": {"algorithm": "auto", "iterations": 40_000, "seed": 1},
            "output": {"mixture": True}}


def group_loss(result, x, y, rows) -> float:
    """The mixture's expected mean logistic loss on ``rows``, from its members' scores."""
    scores = Mixture.from_result(result).member_scores(x[rows])      # (n_G, k)
    weights = np.array([m.weight for m in result.mixture])
    return float(weights @ np.logaddexp(0.0, -y[rows, None] * scores).mean(axis=0))


def test_the_games_hold_an_mlps_group_loss_that_the_free_network_breaks():
    x, y, group = data()
    rows = group == 1
    free = solve(spec(x, y, group, []))
    free_loss = group_loss(free, x, y, rows)
    bound = 0.9 * free_loss
    result = solve(spec(x, y, group, [{"type": "group_loss", "group": "g",
                                       "loss": "logistic", "rhs": bound}]))
    assert result.stats["method"] == "lagrangian"
    assert "group losses on a network" in result.stats["method_reason"]
    tolerance = result.feasibility.tolerance
    assert result.feasibility.feasible
    held = group_loss(result, x, y, rows)
    assert held <= bound + tolerance < free_loss
    report = result.report.training.models["mixture"].constraints[0]
    assert report.type == "group_loss" and abs(report.lhs - held) <= 1e-9
