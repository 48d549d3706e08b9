"""Spec validation: clear messages naming the JSON path, never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.specs import random_spec
from worker.errors import LightTouchError, SpecError
from worker.pipeline.validate import summarize_spec


def spec_with(**changes) -> dict:
    spec = random_spec("hinge", "ordering_pairs", 0, d=8, n=20)
    spec.update(changes)
    return spec


@pytest.mark.parametrize(("change", "path", "words"), [
    ({"constraints": [{"type": "ordering", "pairs": [[0, 1]]}, {"type": "ordering",
      "pairs": [[0, 1], [2, 9000]]}]}, "constraints[1].pairs[1][1]",
     "index 9000 is out of range for dimension 8"),
    ({"constraints": [{"type": "ordering", "chain": [0, 1, 0]}]}, "constraints[0].chain",
     "twice"),
    ({"constraints": [{"type": "monotone_lattice", "shape": [2, 2], "increasing": [0]}]},
     "constraints[0].shape", "4 vertices but the dimension is 8"),
    ({"constraints": [{"type": "monotone_lattice", "shape": [2, 2, 2], "increasing": [3]}]},
     "constraints[0]", "not an axis"),
    ({"constraints": [{"type": "linear", "A": [[0.0] * 8], "b": [-1.0]}]},
     "constraints[0].A", "can never hold"),
    ({"constraints": [{"type": "linear", "A": [[1.0] * 7], "b": [1.0]}]},
     "constraints[0].A", "7 columns; dimension is 8"),
    ({"constraints": [{"type": "sos2"}]}, "constraints[0]", "unknown type 'sos2'; give one of"),
    ({"bounds": {"lower": 1.0, "upper": -1.0}}, "bounds", "W would be empty"),
    ({"solver": {"algorithm": "simplex"}}, "solver.algorithm", "give 'auto', 'lighttouch'"),
    ({"solver": {"iterations": 0}}, "solver.iterations", "give 'auto' or a number >= 1 (got 0)"),
    ({"solver": {"iterations": "many"}}, "solver.iterations",
     "give 'auto' or an integer (got 'many')"),
    ({"solver": {"game": {"proxy": "sigmoid"}}}, "solver.game.proxy", "'hinge' or 'ramp'"),
    ({"dimension": 9}, "objective.data", "8 columns but dimension is 9"),
    ({"surprise": 1}, "surprise", "not a known field; remove it"),
])
def test_bad_specs_name_the_field(change, path, words):
    with pytest.raises(SpecError) as caught:
        summarize_spec(spec_with(**change))
    text = str(caught.value)
    assert text.startswith(path + ":"), text
    assert words in text, text


def test_bad_labels_are_named_with_their_index():
    spec = spec_with()
    spec["objective"]["data"]["labels"][3] = 2.0
    with pytest.raises(SpecError, match=r"objective\.data\.labels\[3\]: 2\.0 is not a class"):
        summarize_spec(spec)


def test_summary_reports_sizes_and_algorithm():
    summary = summarize_spec(random_spec("squared", "lattice", 0, d=16, n=30))
    assert summary["sizes"] == {"parameters": 16, "constraints": 32, "examples": 30}
    assert summary["algorithm"] == "exact_qp"
    assert summary["memory_estimate_bytes"] > 0


def test_paper_lattice_has_24576_constraints():
    spec = {"dimension": 4096, "objective": {"type": "quadratic", "Q": {
        "format": "coo", "shape": [4096, 4096], "row": [0], "col": [0], "data": [1.0]}},
        "constraints": [{"type": "monotone_lattice", "shape": [2] * 12,
                         "increasing": list(range(12))}]}
    assert summarize_spec(spec)["sizes"]["constraints"] == 24_576


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "loss", "data", "features", "labels", "Q", "c", "A", "b",
                         "pairs", "chain", "shape", "increasing", "objective", "constraints",
                         "dimension", "bounds", "lower", "upper", "solver", "format", "row",
                         "col", "uri", "x"]), inner, max_size=5),
    max_leaves=20)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, st.builds(
    lambda objective, constraints, dimension: {"objective": objective,
                                               "constraints": constraints,
                                               "dimension": dimension},
    json_values, json_values, st.integers(-3, 20) | st.none())))
def test_any_json_gives_an_error_or_a_summary(value):
    try:
        summary = summarize_spec(json.loads(json.dumps(value)))
    except LightTouchError as error:
        assert str(error)
    else:
        assert summary["valid"] is True


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 7), st.integers(0, 7), st.data())
def test_structured_specs_with_random_indices(i, j, data):
    spec = spec_with(constraints=[{"type": "ordering", "pairs": [[i, j]]}])
    spec["dimension"] = data.draw(st.sampled_from([8, None]))
    try:
        summary = summarize_spec(spec)
    except SpecError as error:
        assert i == j and "two different indices" in str(error)
    else:
        assert summary["sizes"]["constraints"] == 1


@pytest.mark.parametrize("spec", [
    {"dimension": 10**12, "objective": {"type": "quadratic", "Q": [[1.0]]}},
    {"objective": {"type": "quadratic", "Q": {"format": "coo", "shape": [2**31 - 1, 2**31 - 1],
                                              "row": [], "col": [], "data": []}}},
])
def test_huge_sizes_are_refused_before_allocating(spec):
    with pytest.raises(SpecError, match="give a number <= "):
        summarize_spec(spec)


@pytest.mark.parametrize(("value", "words"), [
    (-0.5, "give a number >= 0.0 (got -0.5)"), (float("nan"), "finite number"),
    (float("inf"), "finite number"), ("some", "give a number (got 'some')")])
@pytest.mark.parametrize("loss", ["hinge", "quadratic"])
def test_l1_must_be_a_finite_nonnegative_number(value, words, loss):
    spec = random_spec(loss, "ordering_pairs", 0, d=8, n=20)
    spec["objective"]["l1"] = value
    with pytest.raises(SpecError) as caught:
        summarize_spec(spec)
    text = str(caught.value)
    assert text.startswith("objective.l1:"), text
    assert words in text, text
