"""A weighted rate objective (``objective.data.weights``): the compiled true rate and hinge
proxy against the weighted definition, integer weights against the same rows repeated, and a
weighted Neyman-Pearson solve against the exact weighted optimum over every classifier of a
1-D score (an LP over the thresholds, HiGHS)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.problem.test_rate_objective import (
    RECALL,
    D,
    N,
    compiled,
    examples,
    least_fpr,
    objective_spec,
    recall_at_least,
)
from tests.problem.test_rates import definition
from worker import solve
from worker.errors import SpecError
from worker.spec.rates import MEAN_METRICS


def weighted_definition(metric: str, scores, y, members, c) -> float:
    """The metric with each example weighing c_i: the unweighted definition on rows repeated
    c_i times, for integer c."""
    rows = np.repeat(np.arange(y.size), c)
    return definition(metric, scores[rows], y[rows], members[rows])


def with_weights(spec: dict, c: np.ndarray) -> dict:
    spec["objective"]["data"]["weights"] = c.tolist()
    return spec


@pytest.mark.parametrize("metric", MEAN_METRICS)
def test_the_weighted_true_rate_and_proxy_are_repeated_rows(metric):
    c = np.random.default_rng(7).integers(0, 4, N)
    problem = compiled(with_weights(objective_spec(metric, "a"), c))
    x, y, groups = examples()
    members = np.array(groups["a"]) > 0
    points = np.random.default_rng(2).normal(size=(6, D))
    expected = [weighted_definition(metric, x @ w, y, members, c) for w in points]
    np.testing.assert_allclose(problem.true_rate.values(points), expected, atol=1e-12)
    proxy, rows = problem.objective, np.repeat(np.arange(N), c)
    repeated_spec = objective_spec(metric, "a")
    data = repeated_spec["objective"]["data"]
    data["features"], data["labels"] = x[rows].tolist(), y[rows].tolist()
    data["groups"] = {k: np.asarray(v)[rows].tolist() for k, v in groups.items()}
    repeated = compiled(repeated_spec).objective
    for w in points:   # the hinge proxy the game descends: the repeated rows' mean hinge
        hinge = np.average(np.maximum(0.0, 1.0 - proxy.labels * (proxy.features @ w)),
                           weights=proxy.weights)
        assert hinge == pytest.approx(
            np.maximum(0.0, 1.0 - repeated.labels * (repeated.features @ w)).mean(), rel=1e-12)


def test_rate_constraints_on_the_objectives_examples_weigh_them():
    c = np.random.default_rng(8).uniform(0.0, 3.0, N)
    spec = with_weights(objective_spec(constraints=[recall_at_least(0.6)]), c)
    x, y, _ = examples()
    w = np.random.default_rng(4).normal(size=D)
    positive = (x @ w > 0)[y > 0]
    expected = 0.6 - np.average(positive, weights=c[y > 0])
    np.testing.assert_allclose(compiled(spec).rates.values(w), [expected], atol=1e-12)


def test_a_rate_whose_examples_all_weigh_0_is_refused():
    _, y, _ = examples()
    spec = with_weights(objective_spec(), np.where(y < 0, 0.0, 1.0))
    with pytest.raises(SpecError, match=r"^objective.data: the data has no examples labelled "
                                        r"-1 of positive weight"):
        compiled(spec)


def one_dimensional(seed: int, n: int = 300):
    """A score whose positives sit 1.5 higher, and (score, 1) as features."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.uniform(size=n) < 0.4, 1.0, -1.0)
    score = rng.normal(size=n) + 1.5 * (y > 0)
    return score, np.column_stack([score, np.ones(n)]), y


def weighted_points(score, y, c) -> np.ndarray:
    """(weighted TPR, weighted FPR) of every classifier of a linear model on (score, 1)."""
    cuts = np.concatenate([[-np.inf], np.sort(score), [np.inf]])
    return np.array([(np.average(positive[y > 0], weights=c[y > 0]),
                      np.average(positive[y < 0], weights=c[y < 0]))
                     for cut in cuts for positive in (score > cut, score < cut)])


def np_spec(x, y, seed: int, c: np.ndarray | None = None) -> dict:
    data = {"features": x.tolist(), "labels": y.tolist()}
    if c is not None:
        data["weights"] = c.tolist()
    return {"objective": {"type": "rate", "metric": "false_positive_rate", "data": data},
            "constraints": [recall_at_least(RECALL)], "solver": {"seed": seed}}


def mixture_rates(result, x, y, c) -> tuple[float, float]:
    """The mixture's expected weighted (TPR, FPR)."""
    weights = np.array([member.weight for member in result.mixture])
    members = np.array([member.solution for member in result.mixture])
    positive = (x @ members.T > 0).astype(float) @ (weights / weights.sum())
    return (float(np.average(positive[y > 0], weights=c[y > 0])),
            float(np.average(positive[y < 0], weights=c[y < 0])))


def test_integer_weights_solve_as_repeated_rows():
    score, x, y = one_dimensional(0)
    c = np.random.default_rng(10).integers(0, 4, score.size)
    rows = np.repeat(np.arange(score.size), c)
    optimum = least_fpr(weighted_points(score, y, c.astype(float)), RECALL)
    for result in (solve(np_spec(x, y, 0, c.astype(float))), solve(np_spec(x[rows], y[rows], 0))):
        tpr, fpr = mixture_rates(result, x, y, c.astype(float))
        assert result.feasibility.feasible and tpr >= RECALL - result.feasibility.tolerance
        assert optimum - 1e-9 <= fpr <= optimum + 0.03, (fpr, optimum)
        assert result.expected.objective == pytest.approx(fpr, abs=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
def test_fractional_weights_move_the_optimum_as_the_exact_lp_says(seed):
    score, x, y = one_dimensional(seed)
    rng = np.random.default_rng(seed + 20)
    # low-scoring positives weigh twice as much: a weighted recall of 0.8 costs more FPR
    c = rng.uniform(0.5, 1.5, score.size) * np.where((y > 0) & (score < 0.5), 2.0, 1.0)
    optimum = least_fpr(weighted_points(score, y, c), RECALL)
    result = solve(np_spec(x, y, seed, c))
    tpr, fpr = mixture_rates(result, x, y, c)
    assert result.feasibility.feasible and tpr >= RECALL - result.feasibility.tolerance
    # within the hinge proxy's gap on these data (the same rows repeated by integer weights
    # near c leave the same gap)
    assert optimum - 1e-9 <= fpr <= optimum + 0.05, (fpr, optimum)
    assert result.expected.objective == pytest.approx(fpr, abs=1e-12)
    # the unweighted answer misses the weighted recall by far
    plain_tpr, _ = mixture_rates(solve(np_spec(x, y, seed)), x, y, c)
    assert plain_tpr < RECALL - 0.05, plain_tpr
