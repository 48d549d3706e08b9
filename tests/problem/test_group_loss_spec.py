"""Group-loss constraints compiled: their values against the mean loss's definition, and bad
specs refused at their JSON path with what to fix (hypothesis for the bound)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.problem.test_rates import D, rate_spec
from worker.errors import SpecError
from worker.losses import LOSSES
from worker.model_types import MODEL_TYPES
from worker.problem.compile import DataSource
from worker.problem.compile_network import compile_network_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec


def group_loss(loss: str = "hinge", group: str | None = "a", rhs: float = 0.5, **more) -> dict:
    return {"type": "group_loss", "group": group, "loss": loss, "rhs": rhs, **more}


def compiled(spec: dict):
    parsed = parse_spec(spec)
    return compile_network_problem(parsed, DataSource([], data_settings()),
                                   MODEL_TYPES[parsed.model.type])


@pytest.mark.parametrize(("objective_loss", "loss"), [
    ("hinge", "hinge"), ("logistic", "squared_hinge"), ("hinge", "logistic"),
    ("squared", "squared")])
def test_a_group_loss_is_the_groups_mean_loss_minus_its_bound(objective_loss, loss):
    spec = rate_spec([group_loss(loss, "a", 0.3), group_loss(loss, None, 0.7)],
                     loss=objective_loss, algorithm="lagrangian")
    data = spec["objective"]["data"]
    x, y = np.array(data["features"]), np.array(data["labels"])
    if objective_loss == "squared":                  # real targets under the squared loss
        y = y * 1.7 + 0.2
        data["labels"] = y.tolist()
    members = np.array(data["groups"]["a"]) > 0
    problem = compiled(spec)
    assert problem.m_total == 2 and [b.index for b in problem.bounded] == [0, 1]
    thetas = np.random.default_rng(1).normal(size=(3, D))
    values = problem.bounded_values(thetas)
    for t, theta in enumerate(thetas):
        per_row = LOSSES[loss].reference_value(x @ theta, y)
        assert values[t, 0] == pytest.approx(per_row[members].mean() - 0.3, rel=1e-12)
        assert values[t, 1] == pytest.approx(per_row.mean() - 0.7, rel=1e-12)


def test_own_data_are_the_constraints_examples():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(30, D))
    y = np.where(rng.normal(size=30) > 0, 1.0, -1.0)
    own = {"features": x.tolist(), "labels": y.tolist(),
           "groups": {"g": (np.arange(30) < 10).astype(float).tolist()}}
    problem = compiled(rate_spec([group_loss("logistic", "g", 0.6, data=own)]))
    theta = rng.normal(size=(1, D))
    expected = LOSSES["logistic"].reference_value(x[:10] @ theta[0], y[:10]).mean() - 0.6
    assert problem.bounded_values(theta)[0, 0] == pytest.approx(expected, rel=1e-12)


def test_weights_make_the_groups_mean_loss_a_weighted_mean():
    spec = rate_spec([group_loss("logistic", "a", 0.3)], algorithm="lagrangian")
    data = spec["objective"]["data"]
    x, y = np.array(data["features"]), np.array(data["labels"])
    c = np.random.default_rng(2).uniform(0.0, 3.0, x.shape[0])
    data["weights"] = c.tolist()
    members = np.array(data["groups"]["a"]) > 0
    theta = np.random.default_rng(3).normal(size=(1, D))
    per_row = LOSSES["logistic"].reference_value(x @ theta[0], y)
    expected = np.average(per_row[members], weights=c[members]) - 0.3
    assert compiled(spec).bounded_values(theta)[0, 0] == pytest.approx(expected, rel=1e-12)


def _spec_with(change):
    spec = rate_spec([group_loss()], algorithm="lagrangian")
    change(spec)
    return spec


BAD = [
    (lambda s: s["constraints"][0].update(loss="huber"), "constraints[0].loss",
     "unknown loss 'huber'; a group's mean loss is one of hinge, logistic"),
    (lambda s: s["constraints"][0].update(rhs=-0.1), "constraints[0].rhs",
     "can never hold; give a bound >= 0"),
    (lambda s: s["constraints"][0].update(group="zz"), "constraints[0].group",
     "unknown group 'zz'; objective.data.groups defines: a, b, nobody"),
    (lambda s: s["constraints"][0].update(group="*"), "constraints[0].group",
     "'*' stands for every group only in the estimators"),
    (lambda s: s["constraints"][0].update(group="nobody"), "constraints[0].group",
     "group 'nobody' has no examples"),
    (lambda s: s["constraints"][0].update(op=">="), "constraints[0].op", "'<='"),
    (lambda s: s["constraints"][0].update(data={"features": [[0.0] * D], "labels": [1.0],
                                                "weights": [-1.0]}),
     "constraints[0].data.weights[0]", "give a finite number >= 0"),
    (lambda s: s["objective"]["data"].update(weights=[
        0.0 if a > 0 else 1.0 for a in s["objective"]["data"]["groups"]["a"]]),
     "constraints[0].group", "every example of group 'a' weighs 0"),
    (lambda s: s["constraints"][0].update(data={"features": [[0.0] * (D + 1)],
                                                "labels": [1.0]}),
     "constraints[0].data.features", f"{D + 1} columns; the objective's data have {D}"),
    (lambda s: s["constraints"].append({"type": "ordering", "pairs": [[0, 1]]}),
     "constraints[1]", "only rate and group_loss constraints are supported"),
    (lambda s: s["solver"].update(algorithm="fulltouch"), "solver.algorithm",
     "group_loss constraints take one of"),
    (lambda s: s.update(objective={"type": "quadratic", "Q": [[1.0]]}), "constraints[0]",
     "not a quadratic, rate or pairwise_hinge objective"),
    (lambda s: s["objective"].update(loss="softmax_cross_entropy"), "constraints[0]",
     "bound a hinge loss of one score; softmax_cross_entropy has K"),
]


@pytest.mark.parametrize(("change", "path", "words"), BAD)
def test_bad_group_losses_name_the_field(change, path, words):
    with pytest.raises(SpecError) as caught:
        compiled(_spec_with(change))
    text = str(caught.value)
    assert text.startswith(path), text
    assert words in text, text


def test_labels_the_loss_does_not_take_are_named_by_row():
    spec = rate_spec([group_loss("hinge", "a")], loss="squared", algorithm="lagrangian")
    labels = np.array(spec["objective"]["data"]["labels"]) * 2.5
    spec["objective"]["data"]["labels"] = labels.tolist()
    row = int(np.flatnonzero(np.array(spec["objective"]["data"]["groups"]["a"]) > 0)[0])
    with pytest.raises(SpecError) as caught:
        compiled(spec)
    assert str(caught.value).startswith("constraints[0].loss: hinge takes"), str(caught.value)
    assert f"objective.data.labels[{row}] is {float(labels[row])!r}" in str(caught.value)


def test_a_max_of_needs_the_constraints_own_data():
    spec = rate_spec([group_loss()], algorithm="lagrangian")
    term = dict(spec["objective"], type="empirical_risk")
    spec["objective"] = {"type": "max_of", "terms": [term, term]}
    with pytest.raises(SpecError, match=r"^constraints\[0\]: a group loss counts on the "
                                        r"objective's examples"):
        compiled(spec)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_bound_is_taken_exactly_when_finite_and_non_negative(rhs):
    spec = rate_spec([group_loss(rhs=rhs)], algorithm="lagrangian")
    if np.isfinite(rhs) and rhs >= 0:
        assert parse_spec(spec).constraints[0].rhs == rhs
    else:
        with pytest.raises(SpecError) as caught:
            parse_spec(spec)
        assert str(caught.value).startswith("constraints[0].rhs"), str(caught.value)

