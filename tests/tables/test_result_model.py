"""The Result describes a calibrated model's categorical features as the spec declared them
(their ``monotonic`` direction and ``monotonic_order``), and a Result read back from its JSON
rebuilds the same transform."""

from __future__ import annotations

import numpy as np
import pytest

from tests.tables.raw import write_table
from tests.tables.test_categorical_lattice import LEVELS, columns, lattice_spec
from tests.tables.test_exact import BOX, data
from tests.tables.test_transforms import table
from worker import solve
from worker.mixture import Mixture
from worker.result import Result
from worker.tables.lattice import LatticeTable


def read_back(result: Result) -> Mixture:
    """The mixture of the Result's JSON, as ``lighttouch predict`` reads it."""
    return Mixture.from_result(Result.model_validate_json(result.model_dump_json()))


def deployed(result: Result) -> np.ndarray:
    return np.array((result.projected or result.mean).solution)


@pytest.mark.parametrize(("declared", "described", "sign"), [
    ({"monotonic": "increasing"}, "increasing", 1.0),
    ({"monotonic": "decreasing"}, "decreasing", -1.0),
    ({}, "increasing", 1.0),                     # an order alone is enforced increasing
])
def test_calibrated_linear_describes_an_ordered_category_as_declared(tmp_path, declared,
                                                                     described, sign):
    order = ["lo", "mid", "hi"]
    spec = {"bounds": {"lower": -BOX, "upper": BOX},
            "model": {"type": "calibrated_linear", "features": [
                {"column": "x", "keypoints": [0.0, 5.0, 10.0]},
                {"column": "c", "categories": "auto", "monotonic_order": order, **declared}]},
            "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 0.01,
                          "data": {"table": write_table(tmp_path / "train", data()),
                                   "label": "y"}},
            "solver": {"iterations": 20_000, "seed": 1}}
    result = solve(spec, roots=[tmp_path])
    feature = result.model.features[1]
    assert (feature.kind, feature.categories) == ("categorical", ["hi", "lo", "mid"])
    assert (feature.monotonic, feature.order) == (described, order)
    along = [feature.outputs[feature.categories.index(c)] for c in order]
    assert (sign * np.diff(along) >= -1e-6).all()      # the outputs follow the declaration
    assert read_back(result).table.describe(deployed(result)) == result.model


def test_calibrated_lattice_describes_a_decreasing_category_as_declared(tmp_path):
    result = solve({**lattice_spec(tmp_path, columns(120, seed=9)),
                    "solver": {"iterations": 5000}}, roots=[tmp_path])
    feature = result.model.features[1]
    assert (feature.monotonic, feature.order) == ("decreasing", LEVELS)
    # decreasing along lo, mid, hi: the lattice axis runs hi 0, mid 1, lo 2
    assert dict(zip(feature.categories, feature.outputs, strict=True)) == \
        {"hi": 0.0, "mid": 1.0, "lo": 2.0}
    assert read_back(result).table.describe(deployed(result)) == result.model


def test_a_result_stating_the_order_lowest_first_without_a_direction_reads_the_same(tmp_path):
    """Results written before the direction was stated gave a decreasing order reversed
    (lowest output first) with ``monotonic`` "none"; they rebuild the same transform."""
    result = solve({**lattice_spec(tmp_path, columns(60)), "solver": {"iterations": 2000}},
                   roots=[tmp_path])
    older = result.model.model_copy(deep=True)
    older.features[1] = older.features[1].model_copy(
        update={"monotonic": "none", "order": LEVELS[::-1]})
    rows = table(x=np.linspace(-1.0, 11.0, 13), c=(LEVELS * 5)[:13])
    np.testing.assert_array_equal(LatticeTable.from_result(older).features(rows).toarray(),
                                  read_back(result).table.features(rows).toarray())


def test_an_unordered_category_is_described_without_a_direction(tmp_path):
    spec = lattice_spec(tmp_path, columns(60))
    spec["model"]["features"][1] = {"column": "c", "categories": "auto"}
    result = solve({**spec, "solver": {"iterations": 2000}}, roots=[tmp_path])
    assert (result.model.features[1].monotonic, result.model.features[1].order) == \
        ("none", None)
