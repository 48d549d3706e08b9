"""A categorical input in a calibrated lattice: its axis against a plain-numpy reference, a
small raw-table problem solved to CVXPY's optimum, predictions on raw rows, the order
respected on a grid, and unseen categories refused."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.tables.raw import write_table
from tests.tables.test_commands import run_cli
from tests.tables.test_exact import BOX, assert_optimal, exact
from tests.tables.test_transforms import reference_simplex, table
from worker import solve
from worker.errors import DataError
from worker.mixture import Mixture
from worker.tables.calibrators import CategoricalCalibrator, NumericCalibrator
from worker.tables.lattice import LatticeTable

LEVELS = ["lo", "mid", "hi"]


@pytest.mark.parametrize(("order", "place"), [
    ((), {"hi": 0, "lo": 1, "mid": 2}),                  # no order: the categories' order
    (("lo", "mid", "hi"), {"lo": 0, "mid": 1, "hi": 2}),  # ordered: lowest first
])
def test_a_categorical_axis_interpolates_like_the_reference(order, place):
    rng = np.random.default_rng(3)
    x, c = rng.uniform(-1, 5, 300), rng.choice(LEVELS, 300)
    knots = np.array([0.0, 1.0, 4.0])
    model = LatticeTable((NumericCalibrator("x", knots),
                          CategoricalCalibrator("c", ("hi", "lo", "mid"), order)), (3, 3))
    features = model.features(table(x=x, c=c))
    points = np.column_stack([np.interp(x, knots, [0, 1, 2]), [place[v] for v in c]])
    np.testing.assert_allclose(features.toarray(), reference_simplex(points, [3, 3]),
                               atol=1e-12)
    assert model.describe(None).features[1].outputs == [place[v] for v in ("hi", "lo", "mid")]
    blocks = model.constraints()              # only an ordered axis is monotone
    assert [block.increasing for block in blocks] == ([[1]] if order else [])


def columns(n: int = 300, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    x, c = rng.uniform(0, 10, n), rng.choice(LEVELS, n)
    bump = np.select([c == "lo", c == "mid"], [0.8, 0.5], -0.6)   # falls along lo, mid, hi
    return {"x": x, "c": c, "t": np.log1p(x) + bump + rng.normal(0, 0.3, n)}


def lattice_spec(tmp_path, data: dict) -> dict:
    """x (keypoints 0, 2, 10 onto 3 coordinates, increasing) and c (3 categories in
    ``monotonic_order``, decreasing along it), squared loss."""
    return {"bounds": {"lower": -BOX, "upper": BOX},
            "model": {"type": "calibrated_lattice", "lattice": {"sizes": [3, 3]}, "features": [
                {"column": "x", "keypoints": [0.0, 2.0, 10.0], "monotonic": "increasing"},
                {"column": "c", "categories": "auto", "monotonic": "decreasing",
                 "monotonic_order": LEVELS}]},
            "objective": {"type": "empirical_risk", "loss": "squared",
                          "data": {"table": write_table(tmp_path / "train", data),
                                   "label": "t"}},
            "solver": {"iterations": 300_000, "seed": 4}}


def test_a_lattice_with_a_categorical_input_reaches_the_exact_optimum(tmp_path):
    data = columns()
    spec = lattice_spec(tmp_path, data)
    # decreasing along lo, mid, hi: coordinates hi 0, mid 1, lo 2, the lattice increasing
    place = {"hi": 0, "mid": 1, "lo": 2}
    points = np.column_stack([np.interp(data["x"], [0, 2, 10], [0, 1, 2]),
                              [place[v] for v in data["c"]]])
    features = reference_simplex(points, [3, 3])
    # vertex (i, j) -> 3 i + j: increasing along i (x) and along j (hi, mid, lo)
    pairs = [(3 * i + j, 3 * (i + 1) + j) for i in range(2) for j in range(3)] + \
        [(3 * i + j, 3 * i + j + 1) for i in range(3) for j in range(2)]
    optimum = exact(features, data["t"], "squared", 0.0, [], pairs)
    assert_optimal(spec, tmp_path, optimum, features, tmp_path / "train.csv")


def test_predictions_on_raw_rows_follow_the_order_on_a_grid(tmp_path):
    result = solve(lattice_spec(tmp_path, columns(seed=8)), roots=[tmp_path])
    assert result.projected is not None and result.projected.max_violation <= 1e-6
    mixture = Mixture.from_result(result)
    grid = np.linspace(-5.0, 15.0, 81)                 # between and beyond the keypoints
    scores = np.column_stack([mixture.score({"x": grid, "c": [level] * grid.size},
                                            "deterministic") for level in LEVELS])
    assert (np.diff(scores, axis=1) <= 1e-6).all()     # falls along lo, mid, hi
    assert (np.diff(scores, axis=0) >= -1e-6).all()    # rises with x
    deployed = np.array(result.deterministic.solution)
    rows = {"x": grid, "c": ["mid"] * grid.size}
    np.testing.assert_allclose(mixture.score(rows, "deterministic"),
                               mixture.table.features(table(**rows)) @ deployed, atol=1e-12)


def test_lighttouch_predict_scores_raw_rows_as_the_solve_does(tmp_path):
    data = columns(120, seed=9)
    result = solve({**lattice_spec(tmp_path, data), "solver": {"iterations": 5000}},
                   roots=[tmp_path])
    (tmp_path / "result.json").write_text(result.model_dump_json())
    pq.write_table(pa.table({"extra": np.arange(120), "c": data["c"], "x": data["x"]}),
                   tmp_path / "later.parquet")                     # another column order
    predicted = run_cli(tmp_path, "predict", str(tmp_path / "result.json"),
                        str(tmp_path / "later.parquet"), "--mode", "expected")
    assert predicted.returncode == 0, predicted.stderr
    place = {"hi": 0, "mid": 1, "lo": 2}
    points = np.column_stack([np.interp(data["x"], [0, 2, 10], [0, 1, 2]),
                              [place[v] for v in data["c"]]])
    weights = np.array([m.weight for m in result.mixture])
    members = np.array([m.solution for m in result.mixture])
    np.testing.assert_allclose(json.loads(predicted.stdout)["scores"],
                               reference_simplex(points, [3, 3]) @ members.T @ weights,
                               atol=1e-10)


def test_a_category_unseen_in_training_is_refused_at_prediction(tmp_path):
    result = solve({**lattice_spec(tmp_path, columns(60)),
                    "solver": {"iterations": 2000}}, roots=[tmp_path])
    mixture = Mixture.from_result(result)
    rows = pa.table({"x": [1.0, 2.0, 3.0], "c": ["lo", "top", "hi"]})
    with pytest.raises(DataError, match=r"column 'c' row 1 holds 'top', not one of the "
                                        r"model's categories \('hi', 'lo', 'mid'\)"):
        mixture.score(rows, "expected")
