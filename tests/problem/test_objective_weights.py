"""The objective's example weights (``objective.data.weights``): refused by path when bad,
the kernels' weighted mean and gradient against numpy, invariants of the weights' scale,
draws by weight, the rates and the report counted with them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.specs import random_spec
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.errors import DataError, SpecError
from worker.kernels.objective import objective_gradient, objective_value, sample_example
from worker.kernels.random import seed_state
from worker.losses import BY_CODE
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

N = 80


def compiled(spec: dict):
    return compile_problem(parse_spec(spec), DataSource([], data_settings()))


def with_weights(weights, loss: str = "logistic", seed: int = 0) -> dict:
    spec = random_spec(loss, "none", seed, n=N)
    spec["objective"]["data"]["weights"] = list(weights)
    return spec


@pytest.mark.parametrize(("weights", "path", "words"), [
    ([1.0] * (N - 1), "objective.data.weights", "give one weight per example (80)"),
    ([1.0] * 17 + [-0.5] + [1.0] * (N - 18), "objective.data.weights[17]",
     "finite number >= 0"),
    ([1.0] * 3 + [float("nan")] + [1.0] * (N - 4), "objective.data.weights",
     "index 3 is nan; every value must be finite"),
    ([1.0] * 5 + [float("inf")] + [1.0] * (N - 6), "objective.data.weights",
     "index 5 is inf"),
    ([0.0] * N, "objective.data.weights", "every weight is 0"),
])
def test_bad_weights_are_refused_with_their_path(weights, path, words):
    with pytest.raises((SpecError, DataError)) as caught:
        compiled(with_weights(weights))
    assert str(caught.value).startswith(path), str(caught.value)
    assert words in str(caught.value)


def test_pairs_take_weights_one_per_pair():
    spec = random_spec("pairwise_hinge", "none", 1, n=N)
    spec["objective"]["data"]["weights"] = [1.0] * (N + 1)
    with pytest.raises(SpecError, match=r"^objective\.data\.weights: length 81"):
        compiled(spec)


@settings(max_examples=25, deadline=None)
# a total above 1e-6 keeps some weight nonzero once scaled by 1e-3 (a lone subnormal weight
# scales to all zeros, which is refused: test_bad_weights_are_refused_with_their_path)
@given(st.lists(st.floats(0.0, 5.0), min_size=N, max_size=N).filter(lambda c: sum(c) > 1e-6),
       st.floats(1e-3, 1e3), st.sampled_from(["hinge", "logistic", "squared",
                                              "squared_hinge"]))
def test_the_kernels_weigh_the_mean_loss_whatever_the_scale(weights, scale, loss):
    weights = np.asarray(weights)
    problem = compiled(with_weights(weights, loss))
    scaled = compiled(with_weights(scale * weights, loss))
    arrays, arrays_scaled = problem_arrays(problem, 0), problem_arrays(scaled, 0)
    w = np.random.default_rng(0).normal(size=problem.d)
    objective = problem.objective
    scores = objective.features @ w
    record = BY_CODE[objective.kind]
    expected = np.average(record.reference_value(scores, objective.labels), weights=weights)
    assert objective_value(arrays, w) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert objective_value(arrays_scaled, w) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    gradient = np.zeros(problem.d)
    objective_gradient(arrays, w, gradient)
    slopes = weights * record.reference_slope(scores, objective.labels) / weights.sum()
    np.testing.assert_allclose(gradient, objective.features.T @ slopes, atol=1e-12)


def test_equal_weights_are_the_unweighted_objective():
    plain = compiled(random_spec("hinge", "none", 0, n=N))
    equal = compiled(with_weights(np.full(N, 2.5), "hinge"))
    w = np.linspace(-1, 1, plain.d)
    assert objective_value(problem_arrays(equal, 0), w) == \
        pytest.approx(objective_value(problem_arrays(plain, 0), w), rel=1e-15)


def test_examples_are_drawn_in_proportion_to_their_weights():
    weights = np.random.default_rng(4).uniform(0.0, 3.0, N)
    weights[[0, 7, N - 1]] = 0.0
    arrays = problem_arrays(compiled(with_weights(weights)), 0)
    rng = seed_state(3)
    draws = 400_000
    counts = np.bincount([sample_example(arrays, rng) for _ in range(draws)], minlength=N)
    expected = draws * weights / weights.sum()
    assert counts[[0, 7, N - 1]].sum() == 0
    spread = np.sqrt(expected + 1.0)
    assert np.max(np.abs(counts - expected) / spread) < 5.0


def test_rates_on_the_objectives_examples_are_weighted():
    weights = np.random.default_rng(5).uniform(0.0, 2.0, N)
    spec = with_weights(weights, "hinge")
    spec["constraints"] = [{"type": "rate", "lhs": {"metric": "positive_prediction_rate"},
                            "op": "<=", "rhs": 0.4}]
    rates = compiled(spec).rates
    w = np.random.default_rng(6).normal(size=spec["dimension"])
    positive = np.asarray(spec_features(spec) @ w > 0, dtype=float)
    assert rates.values(w)[0] == pytest.approx(np.average(positive, weights=weights) - 0.4,
                                               abs=1e-12)


def spec_features(spec: dict) -> np.ndarray:
    return np.asarray(spec["objective"]["data"]["features"])


def test_the_report_weighs_the_training_objective_and_error():
    weights = np.random.default_rng(7).uniform(0.0, 2.0, N)
    spec = with_weights(weights, "logistic")
    spec["solver"]["algorithm"] = "exact_conic"
    result = solve(spec)
    report = result.report
    assert report.objective.weighted
    projected = report.training.models["projected"]
    assert projected.objective == pytest.approx(result.projected.objective, rel=1e-9)
    w = np.asarray(result.projected.solution)
    labels = np.asarray(spec["objective"]["data"]["labels"])
    wrong = (spec_features(spec) @ w > 0) != (labels > 0)
    assert projected.error == pytest.approx(np.average(wrong, weights=weights), abs=1e-12)
