"""Rate constraints: compiled values against the metric definitions, proxy bounds, spec errors,
and a small end-to-end game solve."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from worker import solve
from worker.errors import SpecError
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec
from worker.spec.rates import MEAN_METRICS

N, D = 60, 5


def rate_spec(constraints: list[dict], *, loss: str = "hinge", seed: int = 0,
              algorithm: str = "proxy_lagrangian", iterations: int = 2000) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    x[:, -1] = 1.0
    y = np.where(x @ rng.normal(size=D) + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
    groups = {"a": (rng.uniform(size=N) < 0.3).astype(float).tolist(),
              "b": (rng.uniform(size=N) < 0.6).astype(float).tolist(),
              "nobody": [0.0] * N}
    return {"dimension": D,
            "objective": {"type": "empirical_risk", "loss": loss,
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": groups}},
            "constraints": constraints,
            "solver": {"algorithm": algorithm, "iterations": iterations, "seed": seed,
                       "candidates": 20}}


def term(metric: str, group: str | None = None, scale: float = 1.0) -> dict:
    return {"metric": metric, "group": group, "scale": scale}


def definition(metric: str, scores: np.ndarray, labels: np.ndarray, members: np.ndarray):
    """The metric from its definition (docs/algorithms.md, "Rate constraints"); positive when
    score > 0."""
    positive = scores > 0
    subset = {"true_positive_rate": labels > 0, "false_negative_rate": labels > 0,
              "false_positive_rate": labels < 0, "true_negative_rate": labels < 0}.get(
        metric, np.ones_like(labels, dtype=bool)) & members
    hit = {"positive_prediction_rate": positive, "negative_prediction_rate": ~positive,
           "true_positive_rate": positive, "false_positive_rate": positive,
           "true_negative_rate": ~positive, "false_negative_rate": ~positive,
           "error_rate": positive != (labels > 0)}[metric]
    return hit[subset].mean()


@pytest.mark.parametrize("metric", MEAN_METRICS)
def test_compiled_rates_match_their_definition(metric):
    spec = parse_spec(rate_spec([
        {"type": "rate", "lhs": term(metric, "a"), "op": "<=", "rhs": 0.9},
        {"type": "rate", "lhs": term(metric, "b", 2.0), "op": ">=",
         "rhs": term(metric, None, 0.5)}]))
    problem = compile_problem(spec, DataSource([], data_settings()))
    x, labels = problem.objective.features.toarray(), problem.objective.labels
    groups = {k: np.array(v) > 0 for k, v in
              spec.model_dump()["objective"]["data"]["groups"].items()}
    everyone = np.ones(N, dtype=bool)
    for w in np.random.default_rng(1).normal(size=(5, D)):
        s = x @ w
        expected = [definition(metric, s, labels, groups["a"]) - 0.9,
                    0.5 * definition(metric, s, labels, everyone)
                    - 2.0 * definition(metric, s, labels, groups["b"])]
        np.testing.assert_allclose(problem.rates.values(w), expected, atol=1e-12)
    assert problem.m_total == problem.m + 2


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, D, elements=st.floats(-3, 3)),
       st.sampled_from(MEAN_METRICS), st.floats(0.1, 2.0))
def test_proxy_constraints_bound_the_true_ones(w, metric, scale):
    spec = parse_spec(rate_spec([{"type": "rate", "lhs": term(metric, "a"), "op": ">=",
                                  "rhs": term(metric, None, scale)}]))
    rates = compile_problem(spec, DataSource([], data_settings())).rates
    hinge, ramp = rates.proxy_values(w, "hinge"), rates.proxy_values(w, "ramp")
    assert np.all(hinge >= ramp - 1e-12)   # the ramp is the tighter bound
    assert np.all(ramp >= rates.values(w) - 1e-12)
    # the two forms are the same constraint: equal on indicator inputs
    scores = rates.features @ w
    np.testing.assert_allclose(rates.relaxed.values(scores), rates.values(w), atol=1e-12)


@pytest.mark.parametrize(("constraint", "path", "words"), [
    ({"type": "rate", "lhs": term("true_positive_rate", "c"), "op": ">=", "rhs": 0.5},
     "constraints[0].lhs.group", "unknown group 'c'; objective.data.groups defines: a, b"),
    ({"type": "rate", "lhs": term("true_positive_rate", "nobody"), "op": ">=", "rhs": 0.5},
     "constraints[0].lhs", "group 'nobody' has no examples labelled +1"),
    ({"type": "rate", "lhs": term("positive_prediction_rate"), "op": ">=", "rhs": 1.2},
     "constraints[0]", "can never hold"),
    ({"type": "rate", "lhs": term("error_rate", "a"), "op": "<=", "rhs": -0.1},
     "constraints[0]", "check op and rhs"),
    ({"type": "rate", "lhs": term("true_positive_rate"), "op": "==", "rhs": 0.5},
     "constraints[0].op", "'<=' or '>='"),
])
def test_bad_rate_constraints_name_the_field(constraint, path, words):
    with pytest.raises(SpecError) as caught:
        compile_problem(parse_spec(rate_spec([constraint])), DataSource([], data_settings()))
    assert str(caught.value).startswith(path), str(caught.value)
    assert words in str(caught.value)


def test_rates_need_scored_examples():
    spec = rate_spec([{"type": "rate", "lhs": term("positive_prediction_rate"), "op": ">=",
                       "rhs": 0.2}])
    spec["objective"] = {"type": "quadratic", "Q": np.eye(D).tolist()}
    with pytest.raises(SpecError, match=r"constraints\[0\]: .*quadratic objective has no "
                                        "scored examples.*own 'data'"):
        compile_problem(parse_spec(spec), DataSource([], data_settings()))
    squared = rate_spec([{"type": "rate", "lhs": term("true_positive_rate"), "op": ">=",
                          "rhs": 0.2}], loss="squared")
    with pytest.raises(SpecError, match="needs ±1 labels"):
        compile_problem(parse_spec(squared), DataSource([], data_settings()))


def test_other_algorithms_refuse_rate_constraints():
    spec = rate_spec([{"type": "rate", "lhs": term("positive_prediction_rate"), "op": ">=",
                       "rhs": 0.2}], algorithm="lighttouch")
    with pytest.raises(SpecError, match="solver.algorithm: lighttouch cannot handle rate"):
        solve(spec)


@pytest.mark.parametrize("algorithm", ["auto", "lagrangian"])
def test_games_end_with_a_small_mixture_and_report_their_baseline(algorithm):
    spec = rate_spec([
        {"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": ">=",
         "rhs": term("positive_prediction_rate", None, 0.9)},
        {"type": "linear", "A": [[1.0] + [0.0] * (D - 1)], "b": [0.5]}],
        algorithm=algorithm, iterations=3000)
    spec["output"] = {"single": True, "project": True}
    result = solve(spec)
    assert result.algorithm == ("proxy_lagrangian" if algorithm == "auto" else algorithm)
    assert result.sizes.constraints == 2 and 1 <= len(result.mixture) <= 3
    assert sum(m.weight for m in result.mixture) == pytest.approx(1.0, abs=1e-12)
    assert result.projected is None  # rates: no convex feasible set to project onto
    assert result.stats["baseline_support"] == 20
    # shrinking is at least as good as the baseline on the original constraints
    assert result.expected.max_violation <= result.stats["baseline_max_violation"] + 1e-9
    assert result.single is not None and result.single.weight == 1.0
