"""Scoring new data with a mixture (worker.mixture) and ``lighttouch predict``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from service.cli import main
from worker.errors import SpecError
from worker.mixture import Mixture

SOLUTIONS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
WEIGHTS = np.array([0.5, 0.3, 0.2])


def result_json(with_solutions: bool = True) -> dict:
    members = [{"weight": float(w), "iteration": k, "kind": "iterate", "objective": 0.0,
                "max_violation": 0.0, "solution": s.tolist() if with_solutions else None}
               for k, (w, s) in enumerate(zip(WEIGHTS, SOLUTIONS, strict=True))]
    point = {"solution": [0.0, 0.0], "objective": 0.0, "max_violation": 0.0}
    return {"algorithm": "proxy_lagrangian",
            "sizes": {"parameters": 2, "constraints": 2, "examples": 3},
            "mixture": members, "expected": {"objective": 0.0, "max_violation": 0.0},
            "mean": point, "stats": {}}


def test_expected_and_deterministic_scores():
    mixture = Mixture.from_result(result_json())
    x = np.array([[2.0, 3.0], [-1.0, 0.5]])
    np.testing.assert_allclose(mixture.score(x, "expected"), x @ (WEIGHTS @ SOLUTIONS))
    np.testing.assert_allclose(mixture.score(sp.csr_matrix(x), "deterministic"), x[:, 0])
    np.testing.assert_allclose(mixture.positive_probability(x), [0.8, 0.5])


def test_stochastic_scores_follow_the_weights_and_the_seed():
    mixture = Mixture(SOLUTIONS, WEIGHTS)
    x = np.tile([[1.0, 10.0]], (20_000, 1))  # member scores 1, 10, -11
    scores = mixture.score(x, "stochastic", seed=4)
    np.testing.assert_array_equal(scores, mixture.score(x, "stochastic", seed=4))
    shares = [np.mean(scores == value) for value in (1.0, 10.0, -11.0)]
    np.testing.assert_allclose(shares, WEIGHTS, atol=0.015)


def test_a_result_without_solutions_cannot_be_deployed():
    with pytest.raises(SpecError, match="output.mixture = true"):
        Mixture.from_result(result_json(with_solutions=False))
    with pytest.raises(SpecError, match="3 columns"):
        Mixture(SOLUTIONS, WEIGHTS).score(np.ones((2, 3)))


def test_cli_predict(tmp_path, capsys):
    (tmp_path / "result.json").write_text(json.dumps(result_json()))
    np.save(tmp_path / "x.npy", np.array([[2.0, 3.0], [-1.0, 0.5]]))
    assert main(["predict", str(tmp_path / "result.json"), str(tmp_path / "x.npy"),
                 "--mode", "expected"]) == 0
    out = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(out["scores"], [0.9, -0.25])
    assert out["positive"] == [True, False] and out["mode"] == "expected"
