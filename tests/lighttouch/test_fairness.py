"""fairlearn's criteria by name: their spec constraints hold exactly when every group's rate
is within the bound of the overall one (both directions, per label for the odds), bad
bounds are refused by name, and the estimators take them mixed with spec dicts;
BoundedGroupLoss holds every group's mean loss on a slice of Adult."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import clone

from lighttouch import ConstrainedClassifier, ConstrainedRegressor
from lighttouch.arrays import encode_arrays
from lighttouch.fairness import (
    BoundedGroupLoss,
    DemographicParity,
    EqualizedOdds,
    ErrorRateParity,
    FalsePositiveRateParity,
    TruePositiveRateParity,
)
from lighttouch.problem import Groups, build_spec
from tests.lighttouch.test_estimators import biased
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

N = 300


def rate(metric: str, positive: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> float:
    subset = rows & {"true_positive_rate": labels > 0, "false_positive_rate": labels < 0}.get(
        metric, np.ones_like(rows))
    hit = positive != (labels > 0) if metric == "error_rate" else positive
    return hit[subset].mean()


def worst_gap(criterion, positive, labels, group) -> float:
    """fairlearn's violation: the largest of r rate(G) - rate(all) and r rate(all) - rate(G)
    over groups and the criterion's metrics (r = 1 for a difference bound), minus the
    bound (the slack for a ratio)."""
    ratio = criterion.ratio_bound or 1.0
    bound = criterion.difference_bound if criterion.ratio_bound is None \
        else criterion.ratio_bound_slack
    everyone = np.ones(labels.size, dtype=bool)
    gaps = []
    for metric in criterion.METRICS:
        overall = rate(metric, positive, labels, everyone)
        for name in np.unique(group):
            own = rate(metric, positive, labels, group == name)
            gaps += [ratio * own - overall, ratio * overall - own]
    return max(gaps) - bound


@pytest.mark.parametrize("criterion", [
    DemographicParity(difference_bound=0.05), EqualizedOdds(difference_bound=0.1),
    TruePositiveRateParity(ratio_bound=0.9), FalsePositiveRateParity(ratio_bound=0.8),
    ErrorRateParity(difference_bound=0.02),
    DemographicParity(ratio_bound=0.9, ratio_bound_slack=0.01)])
def test_the_spec_of_a_criterion_is_fairlearns_constraint(criterion):
    features, labels, group = biased(N, seed=2)
    features = np.hstack([features, np.ones((N, 1))])
    signs = np.where(labels > 0, 1.0, -1.0)
    groups = Groups.of(group, N)
    params = {"model": "linear", "l1": 0.0, "l2": 0.0, "bounds": None,
              "constraints": criterion, "algorithm": "auto", "iterations": "auto",
              "random_state": 0, "solver": None}
    spec = parse_spec(encode_arrays(build_spec(params, features, signs, groups,
                                               loss="hinge")))
    rates = compile_problem(spec, DataSource([], data_settings())).rates
    assert rates.m == 2 * len(criterion.METRICS) * 2  # two directions, two groups
    for w in np.random.default_rng(5).normal(size=(20, 4)):
        positive = features @ w > 0
        assert rates.values(w).max() == pytest.approx(
            worst_gap(criterion, positive, signs, group), abs=1e-12)


@pytest.mark.parametrize(("make", "words"), [
    (lambda: DemographicParity(difference_bound=1.5), "difference_bound: 1.5 is outside"),
    (lambda: EqualizedOdds(difference_bound=-0.1), "difference_bound: -0.1 is outside"),
    (lambda: TruePositiveRateParity(ratio_bound=0.0), "ratio_bound: 0.0 is outside (0, 1]"),
    (lambda: ErrorRateParity(difference_bound=float("nan")), "give a number"),
    (lambda: DemographicParity(difference_bound=0.1, ratio_bound=0.9), "not both"),
    (lambda: DemographicParity(), "give difference_bound"),
])
def test_bad_bounds_are_refused_by_name(make, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        make()


def test_criteria_compare_and_print_by_their_parameters():
    assert EqualizedOdds(difference_bound=0.05) == EqualizedOdds(difference_bound=0.05)
    assert EqualizedOdds(difference_bound=0.05) != DemographicParity(difference_bound=0.05)
    assert repr(TruePositiveRateParity(ratio_bound=0.95)) == \
        "TruePositiveRateParity(ratio_bound=0.95)"


def test_the_classifier_takes_criteria_mixed_with_spec_dicts():
    features, labels, group = biased(600)
    linear = {"type": "linear", "A": [[0.0, 0.0, 0.0, 1.0]], "b": [5.0]}
    model = ConstrainedClassifier(constraints=[DemographicParity(difference_bound=0.05),
                                               linear], iterations=20_000)
    model.fit(features, labels, sensitive_features=group)
    positive = model.predict_proba(features)[:, 1]
    gaps = [abs(positive[group == g].mean() - positive.mean()) for g in ("a", "b")]
    assert max(gaps) <= 0.05 + 1e-6
    assert len(model.result_.report.training.models["mixture"].constraints) == 5
    assert clone(model).get_params()["constraints"][0] == DemographicParity(
        difference_bound=0.05)
    one = ConstrainedClassifier(constraints=DemographicParity(difference_bound=0.05),
                                iterations=20_000).fit(features, labels,
                                                       sensitive_features=group)
    assert one.result_.sizes.constraints == 4


def test_an_unknown_constraint_object_is_refused_with_its_index():
    features, labels, group = biased(100)
    model = ConstrainedClassifier(constraints=[DemographicParity(difference_bound=0.1), 3])
    with pytest.raises(ValueError, match=r"constraints\[1\]: give a spec constraint"):
        model.fit(features, labels, sensitive_features=group)


@settings(max_examples=80, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
    [DemographicParity, EqualizedOdds, TruePositiveRateParity, FalsePositiveRateParity,
     ErrorRateParity]))
def test_a_difference_bound_is_taken_exactly_within_zero_and_one(bound, criterion):
    if 0.0 <= bound <= 1.0:
        constraints = criterion(difference_bound=bound).to_spec()
        assert len(constraints) == 2 * len(criterion.METRICS)
        assert {c["rhs"].get("constant", 0.0) for c in constraints} == {bound, -bound}
    else:
        with pytest.raises(ValueError, match="difference_bound"):
            criterion(difference_bound=bound)


def adult_slice(rows: int = 3000):
    """The first ``rows`` of Adult's training file: one-hot and scaled features, labels and
    the sex column."""
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from lighttouch.datasets import adult

    train = adult()[0].iloc[:rows]
    features = train.drop(columns=["Y", "fnlwgt"])
    encode = make_column_transformer(
        (OneHotEncoder(sparse_output=False, handle_unknown="ignore"),
         features.select_dtypes(exclude="number").columns),
        (StandardScaler(), features.select_dtypes("number").columns))
    return encode.fit_transform(features), train["Y"].to_numpy(), train["sex"].to_numpy()


def group_mean_losses(model, features, labels, sex) -> dict[str, float]:
    """Each group's mean logistic loss under the fitted mixture, in expectation."""
    signed = np.where(labels == ">50K", 1.0, -1.0)
    rows = np.hstack([features, np.ones((features.shape[0], 1))])
    losses = {}
    for name in np.unique(sex):
        member = sex == name
        losses[name] = sum(m.weight * np.logaddexp(0.0, -signed[member] * (
            rows[member] @ np.array(m.solution))).mean() for m in model.result_.mixture)
    return losses


def test_bounded_group_loss_holds_every_groups_mean_loss_on_adult():
    """``auto`` solves it exactly (a small convex program); the games are checked against
    CVXPY in tests/algorithms/test_group_loss.py."""
    features, labels, sex = adult_slice()
    free = ConstrainedClassifier(loss="logistic").fit(features, labels)
    bound = 0.366       # the slice's least mean loss of men is 0.3636 (fitted on men alone)
    assert group_mean_losses(free, features, labels, sex)["Male"] > bound + 0.002  # it binds
    model = ConstrainedClassifier(loss="logistic",
                                  constraints=BoundedGroupLoss("logistic", upper_bound=bound))
    model.fit(features, labels, sensitive_features=sex)
    tolerance = model.result_.feasibility.tolerance
    losses = group_mean_losses(model, features, labels, sex)
    assert max(losses.values()) <= bound + tolerance
    assert losses["Male"] >= bound - 5 * tolerance                        # it binds
    assert model.result_.feasibility.feasible
    assert model.result_.stats["method"] == "exact_conic"
    assert model.result_.sizes.constraints == 2
    rows = model.result_.report.training.models["mixture"].constraints
    assert [(r.type, r.group, r.loss, r.bound) for r in rows] == [
        ("group_loss", "Female", "logistic", bound), ("group_loss", "Male", "logistic", bound)]
    assert rows[1].lhs == pytest.approx(losses["Male"], rel=1e-9)
    assert model.predict(features).shape == labels.shape


def test_bounded_group_loss_is_fairlearns_constraint_for_every_group():
    criterion = BoundedGroupLoss("squared", upper_bound=0.05)
    assert criterion.to_spec() == [{"type": "group_loss", "group": "*", "loss": "squared",
                                    "op": "<=", "rhs": 0.05}]
    assert repr(criterion) == "BoundedGroupLoss('squared', upper_bound=0.05)"
    assert criterion == BoundedGroupLoss("squared", upper_bound=0.05)
    features, labels, group = biased(50)
    spec = build_spec(ConstrainedClassifier(constraints=criterion).get_params(), features,
                      labels, Groups.of(group, 50), loss="squared")
    assert [(c["group"], c["rhs"]) for c in spec["constraints"]] == [("a", 0.05),
                                                                     ("b", 0.05)]


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True),
       st.sampled_from(["hinge", "logistic", "squared", "squared_hinge", "huber", "0/1"]))
def test_a_bounded_group_loss_takes_a_loss_by_name_and_a_bound_of_zero_or_more(bound, loss):
    if loss in ("huber", "0/1"):
        with pytest.raises(ValueError, match=r"^loss: .* is not a loss of one score"):
            BoundedGroupLoss(loss, upper_bound=0.1)
    elif np.isfinite(bound) and bound >= 0:
        assert BoundedGroupLoss(loss, upper_bound=bound).to_spec()[0]["rhs"] == bound
    else:
        with pytest.raises(ValueError, match=r"^upper_bound: .* give a finite number >= 0"):
            BoundedGroupLoss(loss, upper_bound=bound)


def test_the_regressor_bounds_every_groups_mean_squared_loss():
    rng = np.random.default_rng(7)
    group = np.where(rng.random(200) < 0.3, "x", "z")
    features = rng.normal(size=(200, 2))
    targets = features @ [1.0, -0.5] + np.where(group == "x", 0.8, 0.0) * features[:, 1] \
        + 0.3 * rng.normal(size=200)
    free = ConstrainedRegressor().fit(features, targets)
    residual = {g: 0.5 * ((free.predict(features) - targets)[group == g] ** 2).mean()
                for g in ("x", "z")}
    bound = 0.5 * (residual["x"] + residual["z"])                 # between the two
    model = ConstrainedRegressor(constraints=BoundedGroupLoss("squared", upper_bound=bound))
    model.fit(features, targets, sensitive_features=group)
    rows = model.result_.report.training.models["mixture"].constraints
    assert [r.group for r in rows] == ["x", "z"]
    assert max(r.lhs for r in rows) <= bound + model.result_.feasibility.tolerance
    assert rows[0].lhs >= bound - 1e-6 > residual["z"]             # x binds
