"""Rate expressions (a side as a sum of scaled terms plus a constant) and the ratio metrics
(precision, false discovery and false omission rates against a constant): compiled values
against their definitions, their refusals, and the spec's validation as a property."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.problem.test_rates import D, N, definition, rate_spec, term
from worker import solve
from worker.errors import DataError, SpecError
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec
from worker.spec.rates import MEAN_METRICS, RATIO_METRICS


def compiled(constraints: list[dict]):
    spec = parse_spec(rate_spec(constraints))
    problem = compile_problem(spec, DataSource([], data_settings()))
    groups = {k: np.array(v) > 0 for k, v in
              spec.model_dump()["objective"]["data"]["groups"].items()}
    return problem, groups


def ratio(metric: str, scores: np.ndarray, labels: np.ndarray, members: np.ndarray) -> float:
    """A ratio metric from its definition: TP/PP, FP/PP or FN/PN on the group."""
    positive = (scores > 0) & members
    negative = (scores <= 0) & members
    return {"precision": (positive & (labels > 0)).sum() / max(positive.sum(), 1),
            "false_discovery_rate": (positive & (labels < 0)).sum() / max(positive.sum(), 1),
            "false_omission_rate": (negative & (labels > 0)).sum() / max(negative.sum(), 1)
            }[metric]


def test_a_difference_bound_is_two_linear_constraints():
    """|TPR(a) - TPR(all)| <= 0.05 as two constraints whose sides are sums."""
    around = {"terms": [term("true_positive_rate")], "constant": 0.05}
    below = {"terms": [term("true_positive_rate")], "constant": -0.05}
    problem, groups = compiled([
        {"type": "rate", "lhs": term("true_positive_rate", "a"), "op": "<=", "rhs": around},
        {"type": "rate", "lhs": term("true_positive_rate", "a"), "op": ">=", "rhs": below}])
    x, labels = problem.objective.features.toarray(), problem.objective.labels
    everyone = np.ones(N, dtype=bool)
    for w in np.random.default_rng(3).normal(size=(5, D)):
        s = x @ w
        gap = definition("true_positive_rate", s, labels, groups["a"]) - \
            definition("true_positive_rate", s, labels, everyone)
        np.testing.assert_allclose(problem.rates.values(w), [gap - 0.05, -gap - 0.05],
                                   atol=1e-12)


@pytest.mark.parametrize("metric", RATIO_METRICS)
@pytest.mark.parametrize("op", ["<=", ">="])
def test_a_ratio_against_a_constant_holds_exactly_when_its_linear_form_does(metric, op):
    problem, groups = compiled([
        {"type": "rate", "lhs": term(metric, "b"), "op": op, "rhs": 0.6},
        {"type": "rate", "lhs": {"terms": [term(metric, "b", 2.0)], "constant": 0.1},
         "op": op, "rhs": 1.3}])   # 2 ratio + 0.1 op 1.3: the same constraint
    x, labels = problem.objective.features.toarray(), problem.objective.labels
    b = groups["b"]
    for w in np.random.default_rng(4).normal(size=(40, D)):
        s = x @ w
        denominator = ((s <= 0) if metric == "false_omission_rate" else (s > 0)) & b
        if not denominator.any():
            continue
        value = ratio(metric, s, labels, b)
        g = problem.rates.values(w)
        holds = value <= 0.6 if op == "<=" else value >= 0.6
        assert (g[0] <= 1e-12) == holds and (g[1] <= 1e-12) == holds
        # the form is the counts' difference over the group's size
        counted = (labels > 0) if metric != "false_discovery_rate" else (labels < 0)
        count = (denominator & counted).sum() - 0.6 * denominator.sum()
        sign = 1.0 if op == "<=" else -1.0
        assert g[0] == pytest.approx(sign * count / b.sum(), abs=1e-12)


@pytest.mark.parametrize(("constraint", "path", "words"), [
    ({"type": "rate", "lhs": term("precision", "a"), "op": ">=", "rhs": term("precision")},
     "constraints[0]", "not linear in the rates"),
    ({"type": "rate", "lhs": term("precision", "nobody"), "op": ">=", "rhs": 0.5},
     "constraints[0].lhs", "group 'nobody' has no examples"),
    ({"type": "rate", "lhs": {"terms": [term("true_positive_rate", "zz")]}, "op": ">=",
      "rhs": 0.5}, "constraints[0].lhs.terms[0].group", "unknown group 'zz'"),
    ({"type": "rate", "lhs": term("true_positive_rate", "*"), "op": ">=", "rhs": 0.5},
     "constraints[0].lhs.group", "'*' stands for every group only in the estimators"),
    ({"type": "rate", "lhs": 0.2, "op": ">=", "rhs": {"terms": [], "constant": 0.1}},
     "constraints[0].rhs.terms", "at least 1"),
    ({"type": "rate", "lhs": 0.2, "op": ">=", "rhs": 0.1},
     "constraints[0]", "neither side has a rate term"),
    ({"type": "rate", "lhs": term("precision", "a", 0.0), "op": ">=", "rhs": 0.1},
     "constraints[0]", "scale of precision is 0"),
])
def test_bad_rate_expressions_name_the_field(constraint, path, words):
    with pytest.raises(SpecError) as caught:
        compile_problem(parse_spec(rate_spec([constraint])), DataSource([], data_settings()))
    assert str(caught.value).startswith(path), str(caught.value)
    assert words in str(caught.value)


def test_a_precision_on_a_group_without_positive_labels_is_refused():
    spec = rate_spec([{"type": "rate", "lhs": term("precision", "neg"), "op": ">=",
                       "rhs": 0.5}])
    labels = np.array(spec["objective"]["data"]["labels"])
    spec["objective"]["data"]["groups"]["neg"] = (labels < 0).astype(float).tolist()
    with pytest.raises(SpecError, match=r"constraints\[0\]\.lhs: group 'neg' has no examples "
                                        r"labelled \+1, so its precision is 0"):
        compile_problem(parse_spec(spec), DataSource([], data_settings()))


terms = st.builds(lambda metric, group, scale: term(metric, group, scale),
                  st.sampled_from(MEAN_METRICS), st.sampled_from([None, "a", "b"]),
                  st.floats(-2, 2, allow_nan=False))
sides = st.one_of(st.floats(-1, 1, allow_nan=False), terms,
                  st.builds(lambda ts, c: {"terms": ts, "constant": c},
                            st.lists(terms, min_size=1, max_size=3),
                            st.floats(-1, 1, allow_nan=False)))


def side_value(side, rate) -> float:
    if isinstance(side, float):
        return side
    if "terms" in side:
        return side["constant"] + sum(t["scale"] * rate(t) for t in side["terms"])
    return side["scale"] * rate(side)


@settings(max_examples=60, deadline=None)
@given(sides, sides, st.sampled_from(["<=", ">="]))
def test_any_sides_compile_to_lhs_minus_rhs(lhs, rhs, op):
    constraint = {"type": "rate", "lhs": lhs, "op": op, "rhs": rhs}
    if isinstance(lhs, float) and isinstance(rhs, float):
        with pytest.raises(SpecError, match="neither side has a rate term"):
            parse_spec(rate_spec([constraint]))
        return
    spec = parse_spec(rate_spec([constraint]))
    try:
        problem = compile_problem(spec, DataSource([], data_settings()))
    except SpecError as error:
        assert "can never hold" in str(error)
        return
    x, labels = problem.objective.features.toarray(), problem.objective.labels
    groups = {k: np.array(v) > 0 for k, v in
              spec.model_dump()["objective"]["data"]["groups"].items()}
    w = np.random.default_rng(0).normal(size=D)

    def rate(t):
        members = np.ones(N, dtype=bool) if t["group"] is None else groups[t["group"]]
        return definition(t["metric"], x @ w, labels, members)

    difference = side_value(lhs, rate) - side_value(rhs, rate)
    expected = difference if op == "<=" else -difference
    assert problem.rates.values(w)[0] == pytest.approx(expected, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=3), st.booleans(), st.lists(st.integers(), max_size=2),
                 st.just({"terms": "x"}), st.just({"metric": "precision", "scale": None})))
def test_malformed_sides_are_refused_at_their_path(side):
    with pytest.raises(SpecError) as caught:
        parse_spec(rate_spec([{"type": "rate", "lhs": term("true_positive_rate"),
                               "op": "<=", "rhs": side}]))
    assert str(caught.value).startswith("constraints[0].rhs"), str(caught.value)


def own_data_spec(weights) -> dict:
    """TPR(a) >= 0.8 TPR(all) counted on a constraint's own (weighted) examples."""
    spec = rate_spec([])
    data = spec["objective"]["data"]
    spec["constraints"] = [{"type": "rate", "lhs": term("true_positive_rate", "a"), "op": ">=",
                            "rhs": term("true_positive_rate", None, 0.8),
                            "data": {"features": data["features"], "labels": data["labels"],
                                     "groups": {"a": data["groups"]["a"]},
                                     "weights": weights}}]
    return spec


def test_weighted_rates_equal_repeated_rows():
    counts = np.random.default_rng(6).integers(0, 4, size=N)
    weighted = compile_problem(parse_spec(own_data_spec(counts.astype(float).tolist())),
                               DataSource([], data_settings())).rates
    repeated_spec = own_data_spec(None)
    data = repeated_spec["constraints"][0]["data"]
    rows = np.repeat(np.arange(N), counts)
    data.pop("weights")
    for key in ("features", "labels"):
        data[key] = np.asarray(data[key])[rows].tolist()
    data["groups"]["a"] = np.asarray(data["groups"]["a"])[rows].tolist()
    repeated = compile_problem(parse_spec(repeated_spec), DataSource([], data_settings())).rates
    for w in np.random.default_rng(7).normal(size=(5, D)):
        np.testing.assert_allclose(weighted.values(w), repeated.values(w), atol=1e-12)
    halves = compile_problem(parse_spec(own_data_spec((counts / 2.5).tolist())),
                             DataSource([], data_settings())).rates
    w = np.ones(D)
    np.testing.assert_allclose(halves.values(w), weighted.values(w), atol=1e-12)


@pytest.mark.parametrize(("weights", "path", "words"), [
    ([1.0] * (N - 1), "constraints[0].data.weights", "give one weight per example"),
    ([1.0] * (N - 1) + [-2.0], f"constraints[0].data.weights[{N - 1}]", "finite number >= 0"),
    ([1.0] * 3 + [float("nan")] + [1.0] * (N - 4), "constraints[0].data.weights",
     "index 3 is nan; every value must be finite"),
    ([0.0] * N, "constraints[0].data.weights", "every weight is 0"),
])
def test_bad_weights_are_refused_with_their_path(weights, path, words):
    with pytest.raises((SpecError, DataError)) as caught:
        compile_problem(parse_spec(own_data_spec(weights)), DataSource([], data_settings()))
    assert str(caught.value).startswith(path), str(caught.value)
    assert words in str(caught.value)


def test_the_games_meet_a_difference_bound_and_a_precision_floor():
    """|PPR(a) - PPR(all)| <= 0.05 and precision(all) >= 0.9: the mixture's report shows
    each side and the difference within the tolerance."""
    around = {"terms": [term("positive_prediction_rate")], "constant": 0.05}
    below = {"terms": [term("positive_prediction_rate")], "constant": -0.05}
    spec = rate_spec([
        {"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": "<=",
         "rhs": around},
        {"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": ">=",
         "rhs": below},
        {"type": "rate", "lhs": term("precision"), "op": ">=", "rhs": 0.9}],
        iterations=20_000)
    result = solve(spec)
    rows = result.report.training.models["mixture"].constraints
    tolerance = result.report.tolerance
    gap = rows[0].terms[0].value - rows[0].terms[1].value
    assert abs(gap) <= 0.05 + tolerance
    assert rows[0].difference == pytest.approx(gap - 0.05, abs=1e-12) == rows[0].worst
    assert rows[1].difference == pytest.approx(gap + 0.05, abs=1e-12) == -rows[1].worst
    assert rows[2].lhs >= 0.9 - tolerance and rows[2].bound == 0.9
