"""The TF Lattice comparison's own parts (:mod:`bench.tf_lattice_compare`): the exact
optimum it measures against is the engine's, the grid check finds a planted violation, and a
missing TensorFlow venv is reported with the command that creates it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench import tf_lattice_compare as compare
from bench.tf_lattice_models import exact_mse, lowered_problem, monotonicity, table_spec
from worker import solve


def test_exact_optimum_matches_the_engines_solve(tmp_path: Path):
    x, y = compare.make_data(300, 0)
    model = {"type": "calibrated_lattice", "sizes": (3, 2, 3),
             "keypoints": compare.quantile_keypoints(x, (3, 2, 3))}
    spec = table_spec(model, compare.write_table(tmp_path / "train.csv", x, y))
    result = solve(spec, roots=[tmp_path])
    problem, features = lowered_problem(spec, tmp_path)
    optimum, _ = exact_mse(problem)
    point = result.projected if result.projected is not None else result.mean
    ours = float(np.mean((features(x) @ np.asarray(point.solution) - y) ** 2))
    assert abs(ours - optimum) <= 1e-6 * optimum


def test_monotonicity_counts_a_step_the_wrong_way():
    cube = np.add.outer(np.arange(4.0), -np.arange(4.0))      # up along 0, down along 1
    assert monotonicity(cube.ravel(), 4, 2, (False, True))["monotonicity_violations"] == 0
    cube[2, 0] = 0.5                                            # below cube[1, 0] = 1
    found = monotonicity(cube.ravel(), 4, 2, (False, True))
    assert found["monotonicity_violations"] >= 1
    assert found["monotonicity_max_drop"] == 0.5


def test_a_missing_venv_says_how_to_create_it(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(compare, "TF_PYTHON", tmp_path / "no-venv" / "python")
    report = compare.run_peer(tmp_path, {}, [])
    assert "missing" in report
    assert report["create_with"] == compare.TF_VENV_COMMAND
    assert "tensorflow-lattice" in report["create_with"]
