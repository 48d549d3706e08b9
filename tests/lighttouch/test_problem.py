"""From estimator parameters and arrays to a spec: groups, '*' constraints, bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lighttouch import ConstrainedClassifier, SpecError
from lighttouch.problem import (
    Groups,
    bounds_block,
    expand_constraints,
    in_user_terms,
    user_constraints,
)

PARITY = {"type": "rate", "op": ">=", "lhs": {"metric": "positive_prediction_rate",
                                              "group": "*"},
          "rhs": {"metric": "positive_prediction_rate", "scale": 0.9}}


def test_one_sensitive_feature_names_groups_by_value():
    groups = Groups.of(np.array(["b", "a", "b"]), 3)
    assert list(groups.members) == ["a", "b"]
    np.testing.assert_array_equal(groups.members["b"], [1.0, 0.0, 1.0])


def test_several_sensitive_features_name_groups_column_equals_value():
    frame = pd.DataFrame({"sex": ["F", "M", "F"], "race": [1, 1, 2]})
    groups = Groups.of(frame, 3)
    assert sorted(groups.members) == ["race=1", "race=2", "sex=F", "sex=M"]
    np.testing.assert_array_equal(groups.members["race=2"], [0.0, 0.0, 1.0])


def test_sensitive_features_of_another_length_are_refused():
    with pytest.raises(ValueError, match="sensitive_features has 2 rows; X has 3"):
        Groups.of(["a", "b"], 3)


def test_every_group_makes_one_constraint_each_and_leaves_the_input_alone():
    groups = Groups.of(["a", "b", "c"], 3)
    expanded = expand_constraints([PARITY], groups)
    assert [c["lhs"]["group"] for c in expanded] == ["a", "b", "c"]
    assert PARITY["lhs"]["group"] == "*" and "group" not in expanded[0]["rhs"]


def test_every_group_without_sensitive_features_is_refused():
    with pytest.raises(ValueError, match=r"constraints\[0\] uses group '\*'"):
        expand_constraints([PARITY], Groups.of(None, 3))


@pytest.mark.parametrize(("bounds", "block"), [
    (None, {}), (2, {"lower": -2.0, "upper": 2.0}), ((0, 1), {"lower": 0, "upper": 1})])
def test_bounds(bounds, block):
    assert bounds_block(bounds) == block


def test_errors_name_the_callers_constraint_not_the_expanded_index():
    """Two groups expand one "*" constraint into two: an issue of either names the
    caller's constraints[1] (and its group when only that group's copy has it)."""
    rng = np.random.default_rng(0)
    features, labels = rng.normal(size=(40, 3)), np.where(rng.random(40) < 0.5, 1, 0)
    box = {"type": "linear", "A": [[1.0, 0.0, 0.0, 0.0]], "b": [1.0]}
    bad = {"type": "rate", "op": ">=", "lhs": {"metric": "true_positive_rate", "group": "*"},
           "rhs": {"metric": "true_positive_rate", "scale": "most"}}
    with pytest.raises(SpecError) as caught:
        ConstrainedClassifier(constraints=[box, bad], iterations=100).fit(
            features, labels, sensitive_features=np.where(rng.random(40) < 0.5, "a", "b"))
    assert caught.value.issues == [("constraints[1].rhs.scale", "give a number (got 'most')")]


def test_an_issue_of_one_group_names_the_group():
    groups = Groups.of(["a", "b"], 2)
    origins = user_constraints([PARITY], groups)
    assert origins == [(0, "a"), (0, "b")]
    error = in_user_terms(SpecError([("constraints[1]", "no row of group 'b' is positive")]),
                          origins)
    assert error.issues == [("constraints[0] (group 'b')", "no row of group 'b' is positive")]
