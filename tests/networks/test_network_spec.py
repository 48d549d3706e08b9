"""Network, multiclass and robust specs: bad input is refused naming the JSON path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.errors import SpecError
from worker.pipeline.validate import summarize_spec
from worker.spec.model_types import MAX_UNITS
from worker.spec.models import parse_spec

FEATURES = [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]


def softmax(labels=(0, 1, 2), features=FEATURES, **extra) -> dict:
    return {"type": "empirical_risk", "loss": "softmax_cross_entropy",
            "data": {"features": features, "labels": list(labels)}, **extra}


def mlp(**changes) -> dict:
    spec = {"model": {"type": "mlp", "hidden": [4]}, "objective": softmax()}
    spec.update(changes)
    return spec


@pytest.mark.parametrize(("spec", "path", "words"), [
    (mlp(model={"type": "mlp", "hidden": [0]}), "model.hidden[0]", "give a number >= 1 (got 0)"),
    (mlp(model={"type": "mlp", "hidden": [MAX_UNITS + 1]}), "model.hidden[0]",
     "give a number <= 65536"),
    (mlp(model={"type": "mlp", "hidden": []}), "model.hidden", "at least 1 item"),
    (mlp(model={"type": "mlp", "hidden": [4], "activation": "sigmoid"}), "model.activation",
     "'relu'"),
    (mlp(model={"type": "conv"}), "model", "unknown type 'conv'"),
    (mlp(objective=softmax(labels=(0, 1, 5), classes=3)), "objective.data.labels[2]",
     "5.0 is not a class index 0..2"),
    (mlp(objective=softmax(labels=(0, 1.5, 1))), "objective.data.labels[1]",
     "1.5 is not a class index"),
    (mlp(objective=softmax(labels=(0, 0, 0))), "objective.data.labels",
     "at least two classes"),
    (mlp(objective=softmax(labels=(0, 1))), "objective.data.labels", "2 labels for 3"),
    (mlp(objective={"type": "max_of", "terms": [softmax(classes=3), softmax(classes=4)]}),
     "objective.terms[1]", "every term of a robust objective scores the same K"),
    (mlp(objective={"type": "max_of", "terms": [
        softmax(), softmax(features=[[0.0, 1.0, 2.0]] * 3)]}),
     "objective.terms[1].data.features", "3 columns but objective.terms[0].data.features has 2"),
    (mlp(objective={"type": "max_of", "terms": [softmax()]}), "objective.terms",
     "give at least 2 item(s)"),
    (mlp(objective=softmax(), dimension=5), "dimension", "the data have 2 features"),
    (mlp(solver={"algorithm": "lighttouch"}), "solver.algorithm", "take one of auto"),
    (mlp(constraints=[{"type": "ordering", "pairs": [[0, 1]]}]), "constraints[0]",
     "only rate and group_loss constraints are supported"),
    (mlp(constraints=[{"type": "rate", "lhs": {"metric": "positive_prediction_rate"},
                       "op": "<=", "rhs": 0.5}]), "constraints[0]", "softmax_cross_entropy has K"),
    ({"objective": {"type": "empirical_risk", "loss": "hinge", "classes": 3,
                    "data": {"features": FEATURES, "labels": [1, -1, 1]}}},
     "objective", "classes is the K of softmax_cross_entropy"),
])
def test_bad_network_specs_name_the_field(spec, path, words):
    with pytest.raises(SpecError) as caught:
        summarize_spec(spec)
    text = str(caught.value)
    assert text.startswith(path + ":") or text.startswith(path + " "), text
    assert words in text, text


def test_rates_on_a_robust_objective_need_their_own_data():
    term = {"type": "empirical_risk", "loss": "logistic",
            "data": {"features": FEATURES, "labels": [1, -1, 1]}}
    spec = {"objective": {"type": "max_of", "terms": [term, term]},
            "constraints": [{"type": "rate", "lhs": {"metric": "positive_prediction_rate"},
                             "op": "<=", "rhs": 0.5}]}
    with pytest.raises(SpecError, match=r"constraints\[0\]: .*max_of objective .* own 'data'"):
        summarize_spec(spec)


def test_validate_reports_parameters_constraints_and_the_game():
    summary = summarize_spec(mlp(objective={"type": "max_of", "terms": [softmax(), softmax()]}))
    # d counts parameters: (2 x 4 + 4) + (4 x 3 + 3); m one slack constraint per term
    assert summary["sizes"] == {"parameters": 27, "constraints": 2, "examples": 6}
    assert summary["algorithm"] == "lagrangian"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, MAX_UNITS + 3), min_size=0, max_size=18))
def test_hidden_layers_are_accepted_exactly_when_in_range(hidden):
    spec = mlp(model={"type": "mlp", "hidden": hidden})
    valid = 1 <= len(hidden) <= 16 and all(1 <= h <= MAX_UNITS for h in hidden)
    if valid:
        assert parse_spec(spec).model.hidden == hidden
    else:
        with pytest.raises(SpecError, match=r"^model\.hidden"):
            parse_spec(spec)


def test_a_network_over_the_memory_budget_is_refused_before_its_data_are_read():
    spec = mlp(model={"type": "mlp", "hidden": [MAX_UNITS, MAX_UNITS]})
    spec["objective"]["data"]["features"] = {"uri": "file:///nonexistent/x.npy"}
    with pytest.raises(SpecError, match=r"^solver\.candidates: the job would hold about .* GiB"):
        summarize_spec(spec, max_job_bytes=2**30)
