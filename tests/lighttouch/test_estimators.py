"""The estimators in scikit-learn's machinery: sensitive features routed through Pipeline and
GridSearchCV, constraints that hold, clone and pickle, sample weights (on a loss, a rate
objective and group losses), sensitive columns."""

from __future__ import annotations

import pickle

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from sklearn import clone, config_context
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from lighttouch import ConstrainedClassifier, ConstrainedRegressor
from lighttouch.fairness import BoundedGroupLoss

#: Each group's positive prediction rate at least 90% of the overall one.
DEMOGRAPHIC_PARITY = [{"type": "rate", "op": ">=",
                       "lhs": {"metric": "positive_prediction_rate", "group": "*"},
                       "rhs": {"metric": "positive_prediction_rate", "scale": 0.9}}]
RATIO = 0.9


def biased(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (n, 3) whose first column, and so the label, favours group "a"."""
    rng = np.random.default_rng(seed)
    group = np.where(rng.integers(0, 2, n) == 1, "a", "b")
    features = rng.normal(size=(n, 3))
    features[:, 0] += (group == "a")
    labels = np.where(features[:, 0] + 0.5 * rng.normal(size=n) > 0.5, 1, 0)
    return features, labels, group


def parity_ratios(model, features, group) -> dict[str, float]:
    """Each group's rate of positive predictions over the overall rate (the mixture's)."""
    positive = model.predict_proba(features)[:, 1]
    return {name: positive[group == name].mean() / positive.mean() for name in ("a", "b")}


def classifier(**params) -> ConstrainedClassifier:
    return ConstrainedClassifier(constraints=DEMOGRAPHIC_PARITY, iterations=20_000, **params)


def test_unconstrained_fits_break_parity_and_constrained_fits_keep_it():
    features, labels, group = biased()
    free = ConstrainedClassifier(iterations=20_000).fit(features, labels)
    fair = classifier().fit(features, labels, sensitive_features=group)
    assert min(parity_ratios(free, features, group).values()) < 0.7
    assert min(parity_ratios(fair, features, group).values()) >= RATIO - 1e-6
    assert fair.groups_ == ["a", "b"] and len(fair.result_.mixture) <= 3


def test_pipeline_routes_sensitive_features_to_the_classifier():
    features, labels, group = biased()
    with config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(StandardScaler(), classifier()).fit(
            features, labels, sensitive_features=group)
    assert pipeline[-1].groups_ == ["a", "b"]
    assert min(parity_ratios(pipeline, features, group).values()) >= RATIO - 1e-6


def test_grid_search_splits_and_routes_sensitive_features():
    features, labels, group = biased()
    with config_context(enable_metadata_routing=True):
        search = GridSearchCV(make_pipeline(StandardScaler(), classifier()),
                              {"constrainedclassifier__l2": [0.0, 0.1]}, cv=2)
        search.fit(features, labels, sensitive_features=group)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert min(parity_ratios(search.best_estimator_, features, group).values()) >= \
        RATIO - 1e-6


def test_a_named_group_that_no_sensitive_feature_gives_is_refused():
    features, labels, _ = biased(100)
    constraint = {**DEMOGRAPHIC_PARITY[0], "lhs": {"metric": "positive_prediction_rate",
                                                    "group": "female"}}
    with pytest.raises(ValueError, match="constraints\\[0\\] names group 'female'"):
        ConstrainedClassifier(constraints=[constraint]).fit(
            features, labels, sensitive_features=np.repeat(["a", "b"], 50))


def test_sensitive_columns_of_a_data_frame_give_the_groups_and_are_not_features():
    features, labels, group = biased()
    frame = pd.DataFrame(features, columns=["x0", "x1", "x2"]).assign(group=group)
    model = classifier(sensitive_columns=["group"]).fit(frame, labels)
    assert model.groups_ == ["a", "b"] and list(model.feature_names_in_) == ["x0", "x1", "x2"]
    assert min(parity_ratios(model, frame, group).values()) >= RATIO - 1e-6


def test_a_fitted_estimator_pickles_and_clones():
    features, labels, group = biased(200)
    model = classifier().fit(features, labels, sensitive_features=group)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(features),
                                  model.predict_proba(features))
    np.testing.assert_array_equal(restored.predict(features), model.predict(features))
    assert clone(model).get_params() == model.get_params()


def test_integer_weights_give_the_optimum_of_repeated_rows():
    features, labels, _ = biased(120)
    weights = np.random.default_rng(1).integers(0, 4, labels.size)
    weighted = ConstrainedRegressor().fit(features, labels, sample_weight=weights)
    repeated = ConstrainedRegressor().fit(np.repeat(features, weights, axis=0),
                                          np.repeat(labels, weights))
    np.testing.assert_allclose(weighted.predict(features), repeated.predict(features),
                               rtol=0, atol=1e-6)


def test_fractional_weights_fit_the_weighted_loss_exactly():
    features, labels, _ = biased(150)
    weights = np.random.default_rng(2).uniform(0.0, 2.5, labels.size)
    model = ConstrainedClassifier("logistic", l2=0.01).fit(features, labels,
                                                           sample_weight=weights)
    x = np.hstack([features, np.ones((labels.size, 1))])
    y = np.where(labels == 1, 1.0, -1.0)
    w = cp.Variable(x.shape[1])
    value = weights @ cp.logistic(-cp.multiply(y, x @ w)) / weights.sum() \
        + 0.005 * cp.sum_squares(w)
    problem = cp.Problem(cp.Minimize(value))
    problem.solve(solver=cp.CLARABEL)
    assert model.result_.projected.objective == pytest.approx(problem.value, rel=1e-6)
    assert model.result_.report.objective.weighted


def test_fractional_weights_weigh_the_rates_the_constraints_bound():
    features, labels, group = biased(400)
    weights = np.random.default_rng(3).uniform(0.0, 3.0, labels.size)
    model = classifier().fit(features, labels, sample_weight=weights,
                             sensitive_features=group)
    positive = model.predict_proba(features)[:, 1]
    overall = np.average(positive, weights=weights)
    for name in ("a", "b"):
        rate = np.average(positive[group == name], weights=weights[group == name])
        assert rate >= RATIO * overall - 2e-3
    reported = model.result_.report.training.models["mixture"].constraints[0].terms
    assert reported[-1].value == pytest.approx(overall, abs=1e-9)


def test_a_network_weighs_its_rows_as_repeated_rows():
    features, labels, _ = biased(80)
    weights = np.random.default_rng(4).integers(0, 3, labels.size)
    mlp = {"type": "mlp", "hidden": [4]}
    weighted = ConstrainedClassifier("logistic", model=mlp, l2=0.01).fit(
        features, labels, sample_weight=weights)
    repeated = ConstrainedClassifier("logistic", model=mlp, l2=0.01).fit(
        np.repeat(features, weights, axis=0), np.repeat(labels, weights))
    assert weighted.result_.algorithm == "lbfgsb"
    np.testing.assert_allclose(weighted.decision_function(features),
                               repeated.decision_function(features), atol=1e-4)


def test_all_zero_weights_are_refused():
    features, labels, _ = biased(50)
    with pytest.raises(ValueError, match="at least one non-zero"):
        ConstrainedClassifier().fit(features, labels, sample_weight=np.zeros(50))


def test_predict_proba_is_the_mixtures_probability_of_a_positive_prediction():
    features, labels, group = biased()
    model = classifier().fit(features, labels, sensitive_features=group)
    scores = model.mixture_.member_scores(np.hstack([features, np.ones((600, 1))]))
    expected = (scores > 0) @ model.mixture_.weights / model.mixture_.weights.sum()
    np.testing.assert_allclose(model.predict_proba(features)[:, 1], expected, rtol=0,
                               atol=1e-12)
    draws = np.mean([model.set_params(random_state=seed).predict(features)
                     for seed in range(100)], axis=0)
    assert abs(draws.mean() - expected.mean()) < 0.01
    assert np.abs(draws - expected).max() < 0.25


def test_a_rate_objective_minimizes_false_positives_at_a_recall():
    features, labels, group = biased(seed=3)
    recall = {"type": "rate", "lhs": {"metric": "true_positive_rate"}, "op": ">=", "rhs": 0.8}
    model = ConstrainedClassifier(objective="false_positive_rate", constraints=recall)
    model.fit(features, labels, sensitive_features=group)
    positive = model.predict_proba(features)[:, 1]
    assert model.result_.stats["method"] == "proxy_lagrangian"
    assert positive[labels == 1].mean() >= 0.8 - model.result_.feasibility.tolerance
    # the Result's objective is the mixture's true false positive rate on these rows
    assert model.result_.expected.objective == pytest.approx(positive[labels == 0].mean(),
                                                             abs=1e-9)
    in_group = ConstrainedClassifier(objective={"metric": "false_positive_rate", "group": "a"},
                                     constraints=recall).fit(features, labels,
                                                             sensitive_features=group)
    positive = in_group.predict_proba(features)[:, 1]
    assert in_group.result_.expected.objective == pytest.approx(
        positive[(labels == 0) & (group == "a")].mean(), abs=1e-9)


def test_a_rate_objective_refuses_what_it_would_ignore():
    features, labels, _ = biased()
    with pytest.raises(ValueError, match="l2 would not change"):
        ConstrainedClassifier(objective="false_positive_rate", l2=0.1).fit(features, labels)
    with pytest.raises(ValueError, match="minimize it with ConstrainedClassifier"):
        ConstrainedRegressor(objective="false_positive_rate").fit(features, labels)


def test_sample_weight_weighs_a_rate_objective_and_a_group_loss():
    features, labels, group = biased(n=300, seed=5)
    counts = np.random.default_rng(6).integers(0, 3, labels.size)
    recall = {"type": "rate", "lhs": {"metric": "true_positive_rate"}, "op": ">=", "rhs": 0.8}
    model = ConstrainedClassifier(objective="false_positive_rate", constraints=recall).fit(
        features, labels, sample_weight=counts)
    positive = model.predict_proba(features)[:, 1]
    negatives = labels == 0
    weighted = np.average(positive[negatives], weights=counts[negatives])
    assert model.result_.expected.objective == pytest.approx(weighted, abs=1e-9)
    assert model.result_.report.training.models["mixture"].objective == pytest.approx(
        weighted, abs=1e-9)
    # a group loss weighted by whole numbers is the same rows repeated (solved exactly)
    rows = np.repeat(np.arange(labels.size), counts)
    bounded = ConstrainedClassifier(loss="logistic", bounds=4.0,
                                    constraints=BoundedGroupLoss("logistic", upper_bound=0.322))
    weighed = clone(bounded).fit(features, labels, sample_weight=counts,
                                 sensitive_features=group)
    repeated = clone(bounded).fit(features[rows], labels[rows], sensitive_features=group[rows])
    assert weighed.result_.stats["method"] == "exact_conic"
    np.testing.assert_allclose(weighed.result_.mean.solution, repeated.result_.mean.solution,
                               atol=1e-5)
    losses = [c.lhs for c in weighed.result_.report.training.models["mean"].constraints]
    assert max(losses) == pytest.approx(0.322, abs=1e-6)          # a bound that binds
    assert losses == pytest.approx(
        [c.lhs for c in repeated.result_.report.training.models["mean"].constraints], abs=1e-6)
