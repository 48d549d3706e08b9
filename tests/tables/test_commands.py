"""``lighttouch solve`` and ``predict`` on raw tables, as real processes: the predictions of
raw rows (columns in another order, extra columns) equal the scores of the solve."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tests.tables.raw import hat_basis, one_hot, write_table
from worker.result import Result

KEYPOINTS = [18.0, 30.0, 45.0, 70.0]


def run_cli(root, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LIGHTTOUCH_DATA_ROOTS": str(root)}
    return subprocess.run([sys.executable, "-m", "service.cli", *args], capture_output=True,
                          text=True, timeout=300, check=False, env=env)


def test_solve_and_predict_raw_rows_from_the_command_line(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    age, sex = rng.uniform(17, 80, n), rng.choice(["Female", "Male"], n)
    income = np.where(0.05 * np.minimum(age, 50) - 1.6 + 0.5 * (sex == "Male")
                      + rng.normal(0, 0.5, n) > 0, ">50K", "<=50K")
    table = write_table(tmp_path / "train", {"age": age, "sex": sex, "income": income})
    spec = {"bounds": {"lower": -5, "upper": 5},
            "model": {"type": "calibrated_linear", "features": [
                {"column": "age", "keypoints": KEYPOINTS, "monotonic": "increasing"},
                {"column": "sex", "categories": "auto"}]},
            "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 0.01,
                          "data": {"table": table,
                                   "label": {"column": "income", "positive": [">50K"]}}},
            "solver": {"iterations": 20_000}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    solved = run_cli(tmp_path, "solve", str(tmp_path / "spec.json"), "-o",
                     str(tmp_path / "result.json"), "-q")
    assert solved.returncode == 0, solved.stderr
    result = Result.model_validate_json((tmp_path / "result.json").read_text())
    assert result.model is not None and result.model.columns == ["age", "sex"]
    assert result.model.features[1].categories == ["Female", "Male"]
    later = pa.table({"extra": np.arange(n), "sex": sex, "age": age})   # another order
    pq.write_table(later, tmp_path / "later.parquet")
    predicted = run_cli(tmp_path, "predict", str(tmp_path / "result.json"),
                        str(tmp_path / "later.parquet"), "--mode", "expected")
    assert predicted.returncode == 0, predicted.stderr
    features = np.column_stack([np.ones(n), hat_basis(age, np.array(KEYPOINTS)),
                                one_hot(sex, ["Female", "Male"])])
    scores = np.array(json.loads(predicted.stdout)["scores"])
    np.testing.assert_allclose(scores, features @ np.array(result.mean.solution), atol=1e-12)


def test_predict_names_the_column_and_row_of_an_unseen_category(tmp_path):
    result = {"algorithm": "lighttouch", "sizes": {"parameters": 3, "constraints": 0,
                                                   "examples": 1},
              "mixture": [{"weight": 1.0, "iteration": 0, "kind": "average", "objective": 0.0,
                           "max_violation": 0.0, "solution": [0.0, 1.0, 2.0]}],
              "expected": {"objective": 0.0, "max_violation": 0.0},
              "mean": {"solution": [0.0, 1.0, 2.0], "objective": 0.0, "max_violation": 0.0},
              "model": {"type": "calibrated_linear", "columns": ["sex"], "layout": "",
                        "features": [{"column": "sex", "kind": "categorical", "offset": 1,
                                      "categories": ["Female", "Male"],
                                      "outputs": [1.0, 2.0]}]},
              "stats": {}}
    (tmp_path / "result.json").write_text(json.dumps(result))
    write_table(tmp_path / "rows", {"sex": ["Male", "Female", "Other"]})
    process = run_cli(tmp_path, "predict", str(tmp_path / "result.json"),
                      str(tmp_path / "rows.csv"))
    assert process.returncode != 0
    assert "column 'sex' row 2 holds 'Other', not one of the model's categories" \
        in process.stderr, process.stderr


def test_the_table_examples_validate():
    from pathlib import Path

    from worker.pipeline.validate import summarize_spec

    examples = Path(__file__).resolve().parents[2] / "examples"
    lattice = summarize_spec(json.loads((examples / "lattice_table.json").read_text()))
    assert lattice["sizes"] == {"parameters": 3 * 3 * 2 * 2, "constraints": 84, "examples": 4000}
    adult = summarize_spec(json.loads((examples / "adult_fairness_table.json").read_text()))
    assert adult["sizes"]["examples"] == 6000 and adult["algorithm"] == "proxy_lagrangian"
