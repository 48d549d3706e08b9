"""From estimator parameters and arrays to a spec: groups, '*' constraints, bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lighttouch.problem import Groups, bounds_block, expand_constraints

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
