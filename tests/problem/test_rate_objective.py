"""A rate as the objective: the compiled proxy and true rate against their definitions, spec
errors by path, the method choice, and Neyman-Pearson solves checked against the exact
optimum over every classifier of a 1-D score (an LP over the thresholds, HiGHS)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from tests.problem.test_rates import definition
from worker import solve
from worker.errors import DataError, SpecError
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec
from worker.spec.rates import MEAN_METRICS

N, D = 80, 4
RECALL = 0.8


def examples(seed: int = 0) -> tuple[np.ndarray, np.ndarray, dict[str, list[float]]]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    x[:, -1] = 1.0
    y = np.where(x @ rng.normal(size=D) + 0.7 * rng.normal(size=N) > 0, 1.0, -1.0)
    groups = {"a": (rng.uniform(size=N) < 0.4).astype(float).tolist(),
              "nobody": [0.0] * N}
    return x, y, groups


def objective_spec(metric: str = "false_positive_rate", group: str | None = None, *,
                   constraints: list | None = None, seed: int = 0, **solver) -> dict:
    x, y, groups = examples(seed)
    return {"objective": {"type": "rate", "metric": metric, "group": group,
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": groups}},
            "constraints": constraints or [],
            "solver": {"seed": seed, **solver}}


def compiled(spec: dict):
    return compile_problem(parse_spec(spec), DataSource([], data_settings()))


def recall_at_least(level: float) -> dict:
    return {"type": "rate", "lhs": {"metric": "true_positive_rate"}, "op": ">=", "rhs": level}


@pytest.mark.parametrize("metric", MEAN_METRICS)
@pytest.mark.parametrize("group", [None, "a"])
def test_true_rate_matches_its_definition_and_the_proxy_bounds_it(metric, group):
    problem = compiled(objective_spec(metric, group))
    x, y, groups = examples()
    members = np.array(groups["a"]) > 0 if group else np.ones(N, dtype=bool)
    points = np.random.default_rng(2).normal(size=(6, D))
    expected = [definition(metric, x @ w, y, members) for w in points]
    np.testing.assert_allclose(problem.true_rate.values(points), expected, atol=1e-12)
    # the objective the game plays is the mean hinge over the rate's examples, >= the rate
    proxy = problem.objective
    for w in points:
        hinge = np.maximum(0.0, 1.0 - proxy.labels * (proxy.features @ w)).mean()
        assert hinge >= definition(metric, x @ w, y, members) - 1e-12


@pytest.mark.parametrize(("change", "path", "words"), [
    ({"metric": "precision"}, "objective.metric", "precision is a ratio of counts"),
    ({"metric": "recall"}, "objective.metric", "unknown metric 'recall'"),
    ({"group": "c"}, "objective.group",
     "unknown group 'c'; objective.data.groups defines: a, nobody"),
    ({"group": "nobody"}, "objective.group", "group 'nobody' has no examples labelled -1"),
    ({"l2": 0.1}, "objective.l2", "not a known field"),
])
def test_bad_rate_objectives_name_the_field(change, path, words):
    spec = objective_spec()
    spec["objective"] |= change
    with pytest.raises(SpecError) as caught:
        compiled(spec)
    assert str(caught.value).startswith(path), str(caught.value)
    assert words in str(caught.value)


def test_networks_and_missing_labels_are_refused_with_what_to_do():
    network = objective_spec()
    network["model"] = {"type": "mlp", "hidden": [4]}
    with pytest.raises(SpecError, match="rate objective is solved for the linear model only"):
        compiled(network)
    unlabelled = objective_spec()
    del unlabelled["objective"]["data"]["labels"]
    with pytest.raises(DataError, match=r"^objective.data.labels: labels are missing"):
        compiled(unlabelled)


@pytest.mark.parametrize("algorithm", ["lagrangian", "fulltouch", "exact_qp", "lbfgsb"])
def test_other_algorithms_refuse_a_rate_objective(algorithm):
    spec = objective_spec(constraints=[recall_at_least(RECALL)], algorithm=algorithm)
    with pytest.raises(SpecError, match=f"^solver.algorithm: {algorithm} cannot minimize a "
                                        "rate.*choose proxy_lagrangian or auto"):
        solve(spec)


def threshold_points(score: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(TPR, FPR) of every classifier of a linear model on (score, 1): predict positive
    above or below each threshold, everything or nothing."""
    cuts = np.concatenate([[-np.inf], np.sort(score), [np.inf]])
    points = []
    for cut in cuts:
        for positive in (score > cut, score < cut):
            points.append((positive[y > 0].mean(), positive[y < 0].mean()))
    return np.array(points)


def least_fpr(points: np.ndarray, recall: float) -> float:
    """The least expected FPR of a mixture of the classifiers with expected TPR >= recall:
    the exact LP over the mixture's weights, by HiGHS."""
    p = cp.Variable(points.shape[0], nonneg=True)
    problem = cp.Problem(cp.Minimize(points[:, 1] @ p),
                         [cp.sum(p) == 1, points[:, 0] @ p >= recall])
    problem.solve(solver=cp.HIGHS)
    return float(problem.value)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_neyman_pearson_on_a_1d_score_is_near_the_exact_optimum(seed):
    rng = np.random.default_rng(seed)
    n = 300
    y = np.where(rng.uniform(size=n) < 0.4, 1.0, -1.0)
    score = rng.normal(size=n) + 1.5 * (y > 0)
    x = np.column_stack([score, np.ones(n)])
    spec = {"objective": {"type": "rate", "metric": "false_positive_rate",
                          "data": {"features": x.tolist(), "labels": y.tolist()}},
            "constraints": [recall_at_least(RECALL)], "solver": {"seed": seed}}
    result = solve(spec)
    assert result.sizes.examples == n  # every example, not only the rate's negatives
    assert result.stats["method"] == "proxy_lagrangian"
    assert "rate as the objective" in result.stats["method_reason"]
    weights = np.array([member.weight for member in result.mixture])
    members = np.array([member.solution for member in result.mixture])
    assert weights.size <= 2  # m + 1
    positive = (x @ members.T > 0).astype(float) @ (weights / weights.sum())
    tpr, fpr = positive[y > 0].mean(), positive[y < 0].mean()
    optimum = least_fpr(threshold_points(score, y), RECALL)
    assert tpr >= RECALL - result.feasibility.tolerance
    assert result.feasibility.feasible
    assert optimum - 1e-9 <= fpr <= optimum + 0.03, (fpr, optimum)
    # the Result scores the true rate, not the hinge proxy the game played
    assert result.expected.objective == pytest.approx(fpr, abs=1e-12)
    hinge = np.maximum(0.0, 1.0 + x[y < 0] @ members.T).mean(axis=0) @ (weights / weights.sum())
    assert hinge > fpr + 0.1


def test_rate_constraints_count_on_the_objectives_examples_and_groups():
    spec = objective_spec("false_positive_rate", "a", seed=3, constraints=[
        {"type": "rate", "lhs": {"metric": "true_positive_rate", "group": "a"}, "op": ">=",
         "rhs": 0.7},
        {"type": "rate", "lhs": {"metric": "true_positive_rate"}, "op": ">=", "rhs": 0.6}])
    problem = compiled(spec)
    x, y, groups = examples(3)
    in_a = np.array(groups["a"]) > 0
    w = np.random.default_rng(4).normal(size=D)
    np.testing.assert_allclose(problem.rates.values(w), [
        0.7 - definition("true_positive_rate", x @ w, y, in_a),
        0.6 - definition("true_positive_rate", x @ w, y, np.ones(N, dtype=bool))], atol=1e-12)
    result = solve(spec)
    assert result.feasibility.feasible
    assert result.expected.max_violation <= result.feasibility.tolerance


def test_progress_reports_the_true_rate():
    spec = objective_spec(constraints=[recall_at_least(0.6)], seed=5)
    reports = []
    solve(spec, progress=reports.append)
    negatives = int((examples(5)[1] < 0).sum())
    assert reports
    for report in reports:  # a false positive rate counts negatives: k / negatives
        assert report.objective * negatives == pytest.approx(
            round(report.objective * negatives), abs=1e-9)
