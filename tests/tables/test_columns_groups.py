"""Columns by name (numbers, text, categories), their errors naming column and row, and
groups by column predicates against numpy masks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from worker.errors import DataError
from worker.spec.tables import AllOfGroup, ColumnGroup
from worker.tables.columns import Table
from worker.tables.groups import group_mask

AGE = [39, 50, 38, 53, 28, 37, 49, 52]
SEX = [" Male", " Male", " Male", " Male", " Female", " Female", " Female", " Male"]
RACE = ["White", "White", "White", "Black", "Black", "White", "Black", "White"]


@pytest.fixture
def people() -> Table:
    """Eight rows of Adult-like columns (text with leading spaces, as the csv file has)."""
    return Table.of(pa.table({" age": AGE, " sex": SEX, "race": RACE,
                              "hours": [" 40", "13", "40 ", "40", "40", "40", "16", "45"]}),
                    "objective.data.table")


def test_numbers_read_numeric_and_numeric_text_columns(people):
    np.testing.assert_array_equal(people.numbers("age"), AGE)
    np.testing.assert_array_equal(people.numbers("hours"), [40, 13, 40, 40, 40, 40, 16, 45])


@pytest.mark.parametrize(("column", "values", "message"), [
    ("x", ["1", "2", "abc"], "column 'x' row 2 holds 'abc', not a number"),
    ("x", [1.0, float("nan"), 2.0], "column 'x' row 1 is nan; every value must be finite"),
    ("x", [1.0, None, 2.0], "column 'x' row 1 is empty (a missing value)"),
    ("x", ["1", "", "2"], "column 'x' row 1 is empty (a missing value)"),
])
def test_bad_numbers_name_the_column_and_row(column, values, message):
    bad = Table.of(pa.table({column: values}), "objective.data.table")
    with pytest.raises(DataError, match="^objective.data.table: " + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        bad.numbers(column)


def test_a_missing_column_lists_the_columns(people):
    with pytest.raises(DataError, match=r"has no column 'sexx'; its columns are 'age', 'sex'"):
        people.numbers("sexx")


def test_codes_and_unseen_categories(people):
    np.testing.assert_array_equal(people.codes("sex", ["Female", "Male"]),
                                  [1, 1, 1, 1, 0, 0, 0, 1])
    with pytest.raises(DataError, match=r"column 'sex' row 4 holds 'Female', not one of the "
                                        r"model's categories \('Male'\)"):
        people.codes("sex", ["Male"])


@pytest.mark.parametrize(("predicate", "expected"), [
    (ColumnGroup(column="sex", equals="Female"), np.array(SEX) == " Female"),
    (ColumnGroup(column="race", **{"in": ["Black", "Asian"]}), np.array(RACE) == "Black"),
    (ColumnGroup(column="age", equals=50), np.array(AGE) == 50),
    (ColumnGroup(column="age", gte=38, lt=50), (np.array(AGE) >= 38) & (np.array(AGE) < 50)),
    (ColumnGroup(column="age", gt=49), np.array(AGE) > 49),
    (AllOfGroup(all_of=[ColumnGroup(column="sex", equals="Female"),
                        ColumnGroup(column="race", equals="Black")]),
     (np.array(SEX) == " Female") & (np.array(RACE) == "Black")),
])
def test_groups_match_numpy_masks(people, predicate, expected):
    np.testing.assert_array_equal(group_mask(predicate, people), expected)


def test_a_range_on_a_text_column_names_it(people):
    with pytest.raises(DataError, match="column 'race' row 0 holds 'White', not a number; a "
                                        "range compares numbers"):
        group_mask(ColumnGroup(column="race", lt=3), people)
