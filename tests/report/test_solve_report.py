"""The report a solve puts in its Result: held-out rows, agreement with the solver's own
numbers, the deterministic model, reproducibility and errors naming the field."""

from __future__ import annotations

import numpy as np
import pytest

from tests.problem.test_rates import N, rate_spec, term
from worker import solve
from worker.errors import SpecError
from worker.mixture import Mixture
from worker.report.split import held_out_rows

RULES = [{"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": ">=",
          "rhs": 0.4},
         {"type": "ordering", "pairs": [[0, 1]]}]


@pytest.fixture(scope="module")
def split_result():
    spec = rate_spec(RULES, iterations=1500)
    spec["validation"] = {"fraction": 0.25, "seed": 1}
    return spec, solve(spec)


def test_a_held_out_share_is_not_trained_on_and_is_reported(split_result):
    spec, result = split_result
    report = result.report
    held = round(0.25 * N)
    assert result.sizes.examples == N - held
    assert report.training.examples == N - held and report.validation.examples == held
    assert set(report.training.models) == {"mixture", "mean", "deterministic"}
    rate = report.validation.models["mixture"].constraints[0]
    low, high = rate.terms[0].interval
    assert low <= rate.terms[0].value <= high
    assert report.training.models["mixture"].constraints[0].terms[0].interval is None


def test_training_numbers_are_the_solvers(split_result):
    _, result = split_result
    mixture = result.report.training.models["mixture"]
    assert mixture.objective == pytest.approx(result.expected.objective, rel=1e-9)
    assert mixture.max_violation == pytest.approx(result.expected.max_violation, abs=1e-12)
    single = result.report.training.models["deterministic"]
    assert single.objective == pytest.approx(result.deterministic.objective, rel=1e-9)
    assert single.max_violation == pytest.approx(result.deterministic.max_violation,
                                                 abs=1e-12)


def test_given_validation_data_equal_the_same_held_out_rows(split_result):
    spec, result = split_result
    data = spec["objective"]["data"]
    training, held = held_out_rows(N, 0.25, 1)
    x, y = np.array(data["features"]), np.array(data["labels"])
    groups = {name: np.array(v) for name, v in data["groups"].items()}
    given = dict(spec, objective=dict(spec["objective"], data={
        "features": x[training].tolist(), "labels": y[training].tolist(),
        "groups": {name: v[training].tolist() for name, v in groups.items()}}),
        validation={"features": x[held].tolist(), "labels": y[held].tolist(),
                    "groups": {name: v[held].tolist() for name, v in groups.items()}})
    again = solve(given)
    assert again.report == result.report
    assert solve(spec).report == result.report  # same spec and seed, same report


def test_deterministic_prediction_uses_the_deterministic_model(split_result):
    _, result = split_result
    mixture = Mixture.from_result(result)
    x = np.random.default_rng(0).normal(size=(30, 5))
    np.testing.assert_array_equal(mixture.score(x, "deterministic"),
                                  x @ np.array(result.deterministic.solution))


@pytest.mark.parametrize(("validation", "path"), [
    ({"features": [[1.0, 2.0]], "labels": [1.0]}, "validation.features"),
    ({"features": [[1.0] * 5], "labels": [1.0, -1.0]}, "validation.labels"),
    ({"features": [[1.0] * 5], "labels": [3.0]}, "validation.labels[0]"),
    ({"features": [[1.0] * 5], "labels": [1.0], "groups": {"a": [2.0]}}, "validation.groups.a"),
    ({"features": [[1.0] * 5], "labels": [1.0]}, "constraints[0]"),
])
def test_bad_validation_data_name_the_field(validation, path):
    spec = rate_spec(RULES, iterations=50)
    spec["validation"] = validation
    with pytest.raises(SpecError, match=path.replace("[", r"\[")):
        solve(spec)


def test_an_mlp_is_reported_on_its_held_out_rows():
    from tests.networks.test_network_games import mlp_rate_spec

    spec = mlp_rate_spec(iterations=600)
    spec["validation"] = {"fraction": 0.2, "seed": 0}
    result = solve(spec)
    report = result.report
    assert report.training.examples == 320 and report.validation.examples == 80
    mixture = report.training.models["mixture"]
    assert mixture.objective == pytest.approx(result.expected.objective, rel=1e-9)
    assert mixture.max_violation == pytest.approx(result.expected.max_violation, abs=1e-12)
    single = report.training.models["deterministic"]
    assert single.objective == pytest.approx(result.deterministic.objective, rel=1e-9)
    held = report.validation.models["mixture"].constraints[0].terms[0]
    assert held.interval is not None and held.examples == held.group_size


def test_objectives_without_a_report_say_so():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 3))
    y = np.sign(x[:, 0] + 0.1).tolist()
    term = {"type": "empirical_risk", "loss": "hinge",
            "data": {"features": x.tolist(), "labels": y}}
    spec = {"objective": {"type": "max_of", "terms": [term, term]},
            "solver": {"iterations": 50}, "validation": {"fraction": 0.2}}
    result = solve(spec)
    assert result.report is None and any("validation: no report" in n for n in result.notes)


def test_a_multiclass_network_reports_its_class_error():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(300, 4))
    labels = x[:, :3].argmax(axis=1).astype(float)
    spec = {"model": {"type": "mlp", "hidden": [8]},
            "objective": {"type": "empirical_risk", "loss": "softmax_cross_entropy",
                          "data": {"features": x.tolist(), "labels": labels.tolist()}},
            "solver": {"iterations": 800}, "validation": {"fraction": 0.2, "seed": 1}}
    result = solve(spec)
    mixture = result.report.training.models["mixture"]
    assert mixture.objective == pytest.approx(result.expected.objective, rel=1e-9)
    training, held = held_out_rows(300, 0.2, 1)
    members = Mixture.from_result(result)
    assert mixture.error == pytest.approx(members.error_rate(x[training], labels[training]),
                                          abs=1e-12)
    assert result.report.validation.models["mixture"].error == pytest.approx(
        members.error_rate(x[held], labels[held]), abs=1e-12)


def test_multiclass_validation_labels_are_class_indices():
    spec = {"model": {"type": "linear"},
            "objective": {"type": "empirical_risk", "loss": "softmax_cross_entropy",
                          "data": {"features": [[1.0, 0.0], [0.0, 1.0]] * 5,
                                   "labels": [0.0, 1.0] * 5}},
            "solver": {"iterations": 50},
            "validation": {"features": [[1.0, 0.0]], "labels": [0.5]}}
    with pytest.raises(SpecError, match=r"validation\.labels\[0\]: 0\.5 is not a class index"):
        solve(spec)
