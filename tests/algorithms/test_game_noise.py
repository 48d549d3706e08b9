"""``eta_lambda: "auto"`` on noisy rate estimates: the variance bound it reads, the step it
picks, and a parity problem over small cells whose defaults match a long, cautious run."""

from __future__ import annotations

import numpy as np
import pytest

from worker import solve
from worker.algorithms.run.game_rounds import rate_arrays
from worker.algorithms.run.multiplier_step import (
    AUTO_ETA_LAMBDA,
    NOISE_BUDGET,
    auto_eta_lambda,
    rate_noise,
)
from worker.kernels.games import LAGRANGIAN, PROXY_SWAP
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

#: Shares of the rows in each cell: the last ones hold a few dozen positives, like Adult's
#: female x black and female x other.
SHARES = (0.5, 0.3, 0.12, 0.05, 0.02, 0.01)
RATIO = 0.95


def parity_spec(seed: int = 0, n: int = 4000) -> tuple[dict, np.ndarray, np.ndarray]:
    """Hinge loss under RATIO TPR(all) <= TPR(G) <= TPR(all) / RATIO for every cell G (12
    rate constraints), cells with different base rates; (spec, features, labels)."""
    rng = np.random.default_rng(seed)
    cell = rng.choice(len(SHARES), size=n, p=SHARES)
    x = np.hstack([rng.normal(size=(n, 4)), np.eye(len(SHARES))[cell], np.ones((n, 1))])
    offset = np.linspace(-1.0, 1.0, len(SHARES))[cell]
    score = x[:, :4] @ np.array([1.5, -1.0, 0.5, 0.8]) + offset + rng.logistic(size=n)
    y = np.where(score > 0, 1.0, -1.0)
    groups = {f"c{k}": (cell == k).astype(float).tolist() for k in range(len(SHARES))}
    constraints = [{"type": "rate", "lhs": {"metric": "true_positive_rate", "group": name},
                    "op": op, "rhs": {"metric": "true_positive_rate", "group": None,
                                      "scale": scale}}
                   for name in groups for op, scale in ((">=", RATIO), ("<=", 1.0 / RATIO))]
    spec = {"dimension": x.shape[1], "constraints": constraints,
            "objective": {"type": "empirical_risk", "loss": "hinge",
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": groups}}}
    return spec, x, y


@pytest.mark.parametrize("relaxed", [False, True])
def test_rate_noise_bounds_the_variance_of_a_steps_estimate(relaxed):
    spec, x, _ = parity_spec(n=1500)
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    form = problem.rates.relaxed if relaxed else problem.rates.proxy
    rates = rate_arrays(problem.rates, problem.d, relaxed=relaxed)
    n, k_r = x.shape[0], 100
    bound = rate_noise(rates, k_r)
    for w in np.random.default_rng(1).normal(size=(5, x.shape[1])):
        positive = (x @ w > 0).astype(float)
        # one draw: the example's terms, times n; a step averages k_r draws
        draw = n * (form.plus.multiply(positive) + form.minus.multiply(1.0 - positive))
        variance = (draw.multiply(draw).mean(axis=1).A1 - draw.mean(axis=1).A1 ** 2) / k_r
        assert variance.max() <= bound * (1 + 1e-12)
        assert variance.max() >= 0.25 * bound    # the bound is of the right size
    assert rate_noise(rates, 4 * k_r) == pytest.approx(bound / 4)
    assert rate_noise(None, k_r) == 0.0


@pytest.mark.parametrize("formulation", [LAGRANGIAN, PROXY_SWAP])
def test_auto_eta_lambda_is_lowered_only_for_noisy_rates(formulation):
    base = AUTO_ETA_LAMBDA[formulation]
    assert auto_eta_lambda(formulation, 0.0) == base
    assert auto_eta_lambda(formulation, 0.5 * NOISE_BUDGET / base) == base
    assert auto_eta_lambda(formulation, 10.0 * NOISE_BUDGET / base) == \
        pytest.approx(0.1 * base)


def test_defaults_on_small_cells_match_a_long_cautious_run():
    """The defaults stop within 0.5% of the objective of 50,000 iterations at a small step;
    the former fixed eta_lambda 1.0 stays more than 2% above it after 16,384 iterations
    (the noise of the small cells' estimates keeps weight off the objective)."""
    spec, _, _ = parity_spec()
    reference = solve(spec | {"solver": {"iterations": 50_000, "game": {"eta_lambda": 0.02}}})
    defaults = solve(spec)
    assert defaults.algorithm == "proxy_lagrangian"
    assert defaults.stats["stopped_by"] == "converged"
    assert defaults.stats["eta_lambda"] < AUTO_ETA_LAMBDA[PROXY_SWAP]
    for result in (reference, defaults):
        assert result.expected.max_violation <= 1e-9
    assert defaults.expected.objective <= 1.005 * reference.expected.objective
    former = solve(spec | {"solver": {"iterations": 16_384, "game": {"eta_lambda": 1.0}}})
    assert former.expected.objective >= 1.02 * reference.expected.objective
