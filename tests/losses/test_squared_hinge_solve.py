"""``lighttouch solve`` on a squared-hinge spec reaches the exact optimum (CVXPY + Clarabel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.specs import exact_optimum, random_spec

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("constraints", ["mixed", "lattice"])
def test_lighttouch_solve_reaches_the_exact_squared_hinge_optimum(constraints, tmp_path):
    spec = random_spec("squared_hinge", constraints, 5, iterations=300_000)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run([sys.executable, "-m", "service.cli", "solve", "spec.json", "-q",
                           "-o", "result.json"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr
    projected = json.loads((tmp_path / "result.json").read_text())["projected"]
    optimum, solution = exact_optimum(spec)
    assert projected["status"] == "optimal" and projected["max_violation"] <= 1e-6
    gap = projected["objective"] - optimum
    assert -1e-6 * max(1.0, abs(optimum)) <= gap <= max(1e-2 * abs(optimum), 1e-3)
    x = np.array(spec["objective"]["data"]["features"])
    y = np.array(spec["objective"]["data"]["labels"])
    assert optimum == pytest.approx(np.mean(np.maximum(0.0, 1.0 - y * (x @ solution)) ** 2),
                                    rel=1e-6, abs=1e-9)
