"""The games with a network theta-player, end to end through ``solve``: robust and multiclass
problems against CVXPY's exact optima, shrinking over MLP candidates, deploying the mixture."""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from service.cli import main
from worker.candidates.shrink import expected_violation
from worker.mixture import Mixture
from worker.model_types import MODEL_TYPES
from worker.pipeline.solve import solve
from worker.problem.compile import DataSource
from worker.problem.compile_network import compile_network_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec


def logistic_term(rng: np.random.Generator, shift: float, n: int = 200, d: int = 5):
    """Examples whose best linear separator differs with ``shift``; last column constant."""
    x = rng.normal(size=(n, d))
    x[:, -1] = 1.0
    truth = np.array([1.0, -1.0, 0.5, shift, 0.0])
    y = np.where(x @ truth + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return x, y


def risk(x: np.ndarray, labels, loss: str = "logistic", **extra) -> dict:
    return {"type": "empirical_risk", "loss": loss,
            "data": {"features": x.tolist(), "labels": np.asarray(labels).tolist()}, **extra}


@pytest.mark.parametrize("algorithm", ["lagrangian", "proxy_lagrangian"])
def test_robust_linear_terms_reach_the_exact_min_max(algorithm):
    rng = np.random.default_rng(0)
    terms = [logistic_term(rng, 2.0), logistic_term(rng, -2.0)]
    w, t = cp.Variable(5), cp.Variable()
    cp.Problem(cp.Minimize(t), [cp.sum(cp.logistic(-cp.multiply(y, x @ w))) / y.size <= t
                                for x, y in terms]).solve(solver=cp.CLARABEL)
    result = solve({"objective": {"type": "max_of", "terms": [risk(x, y) for x, y in terms]},
                    "solver": {"algorithm": algorithm, "iterations": 5000}})
    # E_p L_k(theta) >= L_k(E_p theta) (convexity), so the mixture cannot beat the optimum
    assert t.value - 1e-6 <= result.expected.objective <= t.value * 1.005
    assert len(result.mixture) <= result.sizes.constraints + 1 == 3
    assert result.sizes.parameters == 5 and result.model.type == "linear"


def test_linear_softmax_reaches_the_exact_optimum():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 4))
    labels = (x @ rng.normal(size=(4, 3)) + rng.normal(size=(300, 3))).argmax(axis=1)
    l2 = 0.05
    weights = cp.Variable((4, 3))
    scores = x @ weights
    loss = cp.sum(cp.log_sum_exp(scores, axis=1)) / 300 \
        - cp.sum(cp.multiply(np.eye(3)[labels], scores)) / 300 + l2 / 2 * cp.sum_squares(weights)
    exact = cp.Problem(cp.Minimize(loss)).solve(solver=cp.CLARABEL)
    result = solve({"objective": risk(x, labels, "softmax_cross_entropy", l2=l2),
                    "solver": {"iterations": 5000}})
    assert exact - 1e-6 <= result.expected.objective <= exact * 1.01
    assert result.model.sizes == [4, 3] and result.sizes.parameters == 12


def mlp_rate_spec(iterations: int = 1500) -> dict:
    """A small MLP on two blobs with a group whose positive rate is held at most 40%."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 3))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] ** 2 > 0.5, 1.0, -1.0)
    group = (x[:, 2] > 0).astype(float)
    return {"model": {"type": "mlp", "hidden": [16], "init_seed": 3},
            "objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": {"g": group.tolist()}}},
            "constraints": [{"type": "rate", "lhs": {"metric": "positive_prediction_rate",
                                                     "group": "g"},
                             "op": "<=", "rhs": 0.3}],
            "solver": {"iterations": iterations, "candidates": 40}}


@pytest.mark.parametrize("algorithm", ["lagrangian", "proxy_lagrangian"])
def test_shrinking_mlp_candidates_keeps_m_plus_one_and_beats_theta_bar(algorithm):
    spec = mlp_rate_spec()
    spec["solver"]["algorithm"] = algorithm
    result = solve(spec)
    assert result.algorithm == algorithm and result.model.type == "mlp"
    assert 1 <= len(result.mixture) <= result.sizes.constraints + 1 == 2
    model = parse_spec(spec)
    problem = compile_network_problem(model, DataSource([], data_settings()),
                                      MODEL_TYPES[model.model.type])
    thetas = np.array([m.solution for m in result.mixture])
    weights = np.array([m.weight for m in result.mixture])
    assert expected_violation(weights, problem.rate_values(thetas)) == pytest.approx(
        result.expected.max_violation, abs=1e-12)
    # theta-bar (uniform for the Lagrangian, Theorem 2) is one of the LP's feasible points
    assert result.expected.max_violation <= result.stats["baseline_max_violation"] + 1e-12
    assert result.stats["baseline_support"] == 40


def test_predict_on_an_mlp_mixture_matches_the_members_scores():
    result = solve(mlp_rate_spec(iterations=300))
    mixture = Mixture.from_result(result.model_dump())
    x = np.random.default_rng(5).normal(size=(50, 3))
    members = mixture.member_scores(sp.csr_matrix(x))
    network = mixture.network
    for k, theta in enumerate(mixture.solutions):
        np.testing.assert_allclose(members[:, k], network.scores(theta, sp.csr_matrix(x))[:, 0])
    np.testing.assert_allclose(mixture.score(x, "expected"), members @ mixture.weights)
    drawn = mixture.score(x, "stochastic", seed=4)
    assert all(any(np.isclose(drawn[i], members[i])) for i in range(50))
    single = network.scores(np.array(result.deterministic.solution), sp.csr_matrix(x))
    np.testing.assert_array_equal(mixture.predict(x, "deterministic"), single[:, 0] > 0)


def test_multiclass_mixture_predicts_classes_and_counts_errors():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(200, 4))
    labels = x[:, :3].argmax(axis=1)
    result = solve({"model": {"type": "mlp", "hidden": [8]},
                    "objective": risk(x, labels, "softmax_cross_entropy"),
                    "solver": {"iterations": 2000}})
    mixture = Mixture.from_result(result)
    assert mixture.classes == 3 and mixture.member_scores(x).shape == (200, len(result.mixture), 3)
    predicted = mixture.predict(x, "deterministic")
    assert set(np.unique(predicted)) <= {0, 1, 2}
    assert mixture.error_rate(x, labels) < 0.1


def test_same_spec_and_seed_give_the_same_result():
    spec = mlp_rate_spec(iterations=200)
    first, again = solve(spec), solve(spec)
    assert [m.solution for m in first.mixture] == [m.solution for m in again.mixture]
    spec["model"]["init_seed"] = 4
    assert [m.solution for m in solve(spec).mixture] != [m.solution for m in first.mixture]


def test_cli_solves_a_multiclass_spec_and_predicts_classes(tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(150, 3))
    labels = x.argmax(axis=1)
    np.savez(tmp_path / "train.npz", features=x, labels=labels)
    uri = (tmp_path / "train.npz").as_uri()
    spec = {"model": {"type": "mlp", "hidden": [6]},
            "objective": {"type": "empirical_risk", "loss": "softmax_cross_entropy",
                          "data": {"features": {"uri": uri, "key": "features"},
                                   "labels": {"uri": uri, "key": "labels"}}},
            "solver": {"iterations": 1500}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    np.save(tmp_path / "x.npy", x[:20])
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "spec.json", "-o", "result.json"]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["model"] == {"type": "mlp", "sizes": [3, 6, 3], "bias": True,
                               "activation": "relu"}
    capsys.readouterr()
    assert main(["predict", "result.json", "x.npy", "--mode", "deterministic"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert np.array(out["scores"]).shape == (20, 3)
    assert out["classes"] == np.array(out["scores"]).argmax(axis=1).tolist()
    assert np.mean(np.array(out["classes"]) != labels[:20]) < 0.2
