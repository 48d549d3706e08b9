"""Every bad calibrated-model spec or table gets an error naming the JSON path and the
column (and the row, for values), before anything is solved."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.tables.raw import write_table
from worker.errors import DataError, SpecError
from worker.pipeline.validate import summarize_spec
from worker.spec.models import parse_spec


@pytest.fixture
def base(tmp_path) -> dict:
    """A valid calibrated linear spec over a small csv table."""
    columns = {"age": [25.0, 38.0, 52.0, 61.0, 33.0, 47.0], "sex": ["F", "M", "M", "F", "F", "M"],
               "y": [-1, 1, 1, -1, -1, 1], "income": [">50K", "<=50K", ">50K", "<=50K",
                                                      "<=50K", ">50K"],
               "flat": [3.0] * 6, "age_text": ["25", "old", "52", "61", "33", "47"]}
    table = write_table(tmp_path / "t", columns)
    return {"model": {"type": "calibrated_linear", "features": [
        {"column": "age", "keypoints": 3, "monotonic": "increasing"},
        {"column": "sex", "categories": "auto"}]},
        "objective": {"type": "empirical_risk", "loss": "hinge",
                      "data": {"table": table, "label": "y"}}}


def edited(spec: dict, path: list, value) -> dict:
    spec = copy.deepcopy(spec)
    node = spec
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return spec


def test_the_base_spec_is_valid(base, tmp_path):
    assert summarize_spec(base, roots=[tmp_path])["sizes"]["parameters"] == 1 + 3 + 2


SPEC_ERRORS = [
    (["model", "features", 0, "keypoints"], [20.0, 40.0, 40.0],
     "model.features[0]: column 'age': keypoints[2] = 40.0 is not above keypoints[1]"),
    (["model", "features", 1, "monotonic"], "increasing",
     "model.features[1]: column 'sex': monotonic on a categorical feature needs an order"),
    (["model", "features", 0, "monotonic_order"], ["F", "M"],
     "model.features[0]: column 'age': monotonic_order orders categories"),
    (["model", "features", 1], {"column": "age", "keypoints": [1.0, 2.0]},
     "model: column 'age' is a feature twice"),
    (["model"], {"type": "calibrated_lattice", "lattice": {"sizes": 2}, "features": [
        {"column": f"c{j}"} for j in range(23)]},
     "lattice.sizes: the lattice would have 8,388,608 vertices, over 4,194,304 (2^22)"),
    (["model"], {"type": "calibrated_lattice", "features": [{"column": "age",
                                                             "convexity": "convex"}]},
     "features[0]: column 'age': a lattice input has no convexity"),
    (["model"], {"type": "calibrated_lattice", "lattice": {"sizes": [3]},
                 "features": [{"column": "sex", "categories": ["F", "M"]}]},
     "lattice.sizes[0]: column 'sex' has 2 categories, so its lattice size is 2, not 3"),
    (["model"], {"type": "calibrated_lattice", "features": [{"column": "sex",
                                                             "categories": ["F"]}]},
     "features[0]: column 'sex': a lattice input needs 2 or more categories, got 1"),
    (["model"], {"type": "calibrated_lattice", "features": [
        {"column": "sex", "categories": ["F", "M", "X"], "monotonic": "increasing",
         "monotonic_order": ["F", "M"]}]},
     "features[0]: column 'sex': monotonic_order leaves out 'X'; a lattice input's order"),
    (["model"], {"type": "calibrated_lattice", "features": [
        {"column": f"c{j}", "categories": list("abcde")} for j in range(10)]},
     "lattice.sizes: the lattice would have 9,765,625 vertices, over 4,194,304 (2^22)"),
    (["objective", "loss"], "softmax_cross_entropy",
     "objective.loss: calibrated_linear has one output"),
    (["model"], {"type": "linear"},
     "objective.data.table: a table is read by a calibrated model"),
    (["objective", "data"], {"features": [[1.0]], "labels": [1.0]},
     "objective.data.features: a calibrated model reads data.table"),
    (["objective", "data", "features"], [[1.0]],
     "objective.data.features: not a known field; remove it"),
    (["dimension"], 6, "dimension: a calibrated model's parameters follow from its features"),
    (["objective", "data", "groups"], {"f": {"column": "sex", "equals": "F", "gt": 1.0}},
     "column 'sex': give exactly one test"),
]


@pytest.mark.parametrize(("path", "value", "message"), SPEC_ERRORS,
                         ids=[message.split(":")[0] + str(k)
                              for k, (_, _, message) in enumerate(SPEC_ERRORS)])
def test_spec_errors_name_the_path_and_column(base, path, value, message):
    with pytest.raises(SpecError) as error:
        parse_spec(edited(base, path, value))
    assert message in str(error.value)


DATA_ERRORS = [
    (["model", "features", 0, "column"], "agee",
     "objective.data.table: the table has no column 'agee'; its columns are 'age', 'sex'"),
    (["model", "features", 0, "column"], "age_text",
     "objective.data.table: column 'age_text' row 1 holds 'old', not a number"),
    (["objective", "data", "label"], "income",
     "objective.data.label: column 'income' row 0 holds '>50K', not a number; name the "
     "positive classes"),
    (["objective", "data", "label"], {"column": "income", "positive": [">50K."]},
     "objective.data.label: no row of column 'income' holds one of ['>50K.']"),
    (["model", "features", 1, "categories"], ["F"],
     "column 'sex' row 1 holds 'M', not one of the model's categories ('F')"),
    (["model", "features", 0, "column"], "flat",
     "model.features[0]: column 'flat' holds the single value 3.0 on its 6 rows"),
    (["model", "features", 1], {"column": "sex", "categories": "auto",
                                "monotonic_order": ["F", "X"]},
     "model.features[1]: monotonic_order names 'X', which column 'sex' never holds"),
    (["objective", "data", "groups"], {"g": {"column": "race", "equals": "x"}},
     "objective.data.table: the table has no column 'race'"),
    (["model"], {"type": "calibrated_lattice", "lattice": {"sizes": [3]},
                 "features": [{"column": "sex", "categories": "auto"}]},
     "model.lattice.sizes[0]: column 'sex' has 2 categories, so its lattice size is 2, "
     "not 3"),
    (["model"], {"type": "calibrated_lattice", "features": [
        {"column": "sex", "categories": "auto", "monotonic": "decreasing",
         "monotonic_order": ["M"]}]},
     "model.features[0]: column 'sex': monotonic_order leaves out 'F'"),
    (["model"], {"type": "calibrated_lattice", "features": [
        {"column": "flat", "categories": "auto"}]},
     "model.features[0]: column 'flat' holds only ['3']; a lattice input needs 2 or more"),
    (["model"], {"type": "calibrated_lattice", "features": [
        {"column": "age", "keypoints": [20, 60]}, {"column": "age_text", "categories": "auto"}],
        "lattice": {"sizes": 2**20}},
     "model.lattice.sizes: with the categories the tables hold, the lattice would have "
     "6,291,456 vertices"),
]


@pytest.mark.parametrize(("path", "value", "message"), DATA_ERRORS,
                         ids=[str(k) for k in range(len(DATA_ERRORS))])
def test_data_errors_name_the_path_column_and_row(base, tmp_path, path, value, message):
    with pytest.raises((DataError, SpecError)) as error:
        summarize_spec(edited(base, path, value), roots=[tmp_path])
    assert message in str(error.value)


def test_nan_in_a_parquet_table_names_the_row(base, tmp_path):
    table = write_table(tmp_path / "nan", {"age": [20.0, np.nan, 40.0], "sex": ["F"] * 3,
                                           "y": [1, -1, 1]}, "parquet")
    with pytest.raises(DataError, match=r"objective.data.table: column 'age' row 1 is nan"):
        summarize_spec(edited(base, ["objective", "data", "table"], table), roots=[tmp_path])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize(("path", "value"), [
    (["model", "features", 0, "column"], "blank"),
    (["model", "features", 1, "column"], "blank"),
    (["objective", "data", "label"], "blank"),
])
def test_a_column_of_empty_cells_names_its_first_row(base, tmp_path, fmt, path, value):
    """A column with no value at all (read as Arrow's null type) is refused like one with a
    missing cell: at row 0, as a feature (numeric or categorical) or as the label."""
    table = write_table(tmp_path / "blank", {"age": [20.0, 30.0, 40.0], "sex": ["F"] * 3,
                                             "y": [1, -1, 1], "blank": [None] * 3}, fmt)
    spec = edited(edited(base, ["objective", "data", "table"], table), path, value)
    with pytest.raises(DataError, match=r"column 'blank' row 0 is empty \(a missing value\); "
                                        "fill it or drop the row"):
        summarize_spec(spec, roots=[tmp_path])


@pytest.mark.parametrize(("cells", "row"), [(["20", "NaN", "40"], 1), (["nan"] * 3, 0),
                                            (["20", "30", "-NaN"], 2)])
def test_a_nan_cell_of_a_csv_table_is_nan_not_empty(base, tmp_path, cells, row):
    """A csv cell spelling NaN is the number NaN, refused as not finite (not as empty)."""
    table = tmp_path / "nan.csv"
    table.write_text("age,sex,y\n" + "".join(f"{cell},F,1\n" for cell in cells))
    spec = edited(base, ["objective", "data", "table"], {"uri": table.as_uri()})
    with pytest.raises(DataError, match=rf"objective.data.table: column 'age' row {row} is "
                                        "nan; every value must be finite"):
        summarize_spec(spec, roots=[tmp_path])


def test_nan_in_a_categorical_column_is_refused_not_a_category(base, tmp_path):
    table = write_table(tmp_path / "nan", {"age": [20.0, 30.0, 40.0], "y": [1, -1, 1],
                                           "sex": [1.0, np.nan, 2.0]}, "parquet")
    with pytest.raises(DataError, match=r"objective.data.table: column 'sex' row 1 is nan"):
        summarize_spec(edited(base, ["objective", "data", "table"], table), roots=[tmp_path])


@pytest.mark.parametrize("group", [{"column": "sex", "equals": "F"},
                                   {"all_of": [{"column": "age", "gte": 30}]}])
def test_a_column_group_of_pairs_is_refused_naming_the_group(base, group):
    table = base["objective"]["data"]["table"]
    spec = edited(edited(base, ["objective", "loss"], "pairwise_hinge"), ["objective", "data"],
                  {"positive": table, "negative": table, "groups": {"women": group}})
    with pytest.raises(SpecError) as error:
        parse_spec(spec)
    assert str(error.value) == (
        "objective.data.groups.women: column groups are not available for pairwise data "
        "(data.positive, data.negative): a group here is a 0/1 vector with one entry per "
        "pair, and rate constraints do not count on pairs; drop the group")


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=8))
def test_keypoints_are_accepted_exactly_when_they_increase(keypoints):
    spec = {"model": {"type": "calibrated_linear",
                      "features": [{"column": "x", "keypoints": keypoints}]},
            "objective": {"type": "empirical_risk", "loss": "hinge",
                          "data": {"table": {"uri": "file:///t.csv"}, "label": "y"}}}
    increasing = all(b > a for a, b in zip(keypoints[:-1], keypoints[1:], strict=False))
    if increasing:
        parse_spec(spec)
    else:
        with pytest.raises(SpecError, match=r"model.features\[0\]: column 'x': keypoints\["):
            parse_spec(spec)


@pytest.mark.parametrize("data", [[None, None], "table", 3])
def test_data_of_the_wrong_type_is_a_spec_error(data):
    spec = {"objective": {"type": "empirical_risk", "loss": "hinge", "data": data}}
    with pytest.raises(SpecError, match="objective.data"):
        parse_spec(spec)
