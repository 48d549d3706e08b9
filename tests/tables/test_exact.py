"""Small raw-table problems solved to their exact optimum: the solve of a calibrated model
against CVXPY (Clarabel) on features built here with plain numpy; predictions on the raw
rows equal the members' scores on those features."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pyarrow.csv as pa_csv
import pytest

from tests.tables.raw import curvature_matrix, hat_basis, one_hot, write_table
from tests.tables.test_transforms import reference_simplex
from worker import solve
from worker.mixture import Mixture

LOSSES = {"hinge": lambda s, y: cp.pos(1 - cp.multiply(y, s)),
          "logistic": lambda s, y: cp.logistic(-cp.multiply(y, s)),
          "squared": lambda s, y: 0.5 * cp.square(s - y)}


def data(n: int = 240, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x, c = rng.uniform(0, 10, n), rng.choice(["lo", "mid", "hi"], n)
    signal = np.sqrt(x) - 1.5 + 0.8 * (c == "hi") - 0.4 * (c == "lo") + rng.normal(0, 0.7, n)
    return {"x": x, "c": c, "target": signal, "y": np.where(signal > 0, 1, -1)}


#: The box of every parameter (the automatic steps need a bounded domain).
BOX = 4.0


def exact(features: np.ndarray, labels: np.ndarray, loss: str, l2: float, rows,
          pairs) -> float:
    """min mean loss + l2/2 ||w||^2 over the box s.t. rows (A, b) and w_i <= w_j for (i, j)
    in pairs."""
    w = cp.Variable(features.shape[1])
    objective = cp.sum(LOSSES[loss](features @ w, labels)) / features.shape[0] \
        + l2 / 2 * cp.sum_squares(w)
    constraints = [a @ w <= b for a, b in rows] + [w[i] <= w[j] for i, j in pairs] \
        + [w >= -BOX, w <= BOX]
    problem = cp.Problem(cp.Minimize(objective), constraints)
    problem.solve(solver=cp.CLARABEL)
    return float(problem.value)


def chain(indices) -> list[tuple[int, int]]:
    return list(zip(indices[:-1], indices[1:], strict=True))


def assert_optimal(spec: dict, root, optimum: float, features: np.ndarray, table_path) -> None:
    """The projected mean reaches the optimum; the raw rows score as the features do."""
    result = solve(spec, roots=[root])
    projected = result.projected
    assert projected is not None and projected.max_violation <= 1e-6
    gap = projected.objective - optimum
    assert -1e-6 * max(1.0, abs(optimum)) <= gap <= max(1e-2 * abs(optimum), 1e-3), \
        (projected.objective, optimum)
    mixture = Mixture.from_result(result.model_dump())
    raw = pa_csv.read_csv(table_path)
    np.testing.assert_allclose(mixture.member_scores(raw), features @ mixture.solutions.T,
                               atol=1e-12)


KEYPOINTS = [0.0, 1.0, 2.5, 5.0, 10.0]


@pytest.mark.parametrize(("loss", "shape"), [("squared", "convex"), ("hinge", "monotone"),
                                             ("logistic", "categorical")])
def test_calibrated_linear_reaches_the_exact_optimum(tmp_path, loss, shape):
    columns = data(seed=len(shape))
    label = "target" if loss == "squared" else "y"
    table = write_table(tmp_path / "train", columns)
    numeric = {"column": "x", "keypoints": KEYPOINTS}
    numeric.update({"convex": {"convexity": "concave"},
                    "monotone": {"monotonic": "increasing"}}.get(shape, {}))
    categorical = {"column": "c", "categories": ["lo", "mid", "hi"]}
    if shape == "categorical":
        categorical.update(monotonic="increasing", monotonic_order=["lo", "mid", "hi"])
    spec = {"bounds": {"lower": -BOX, "upper": BOX},
            "model": {"type": "calibrated_linear", "features": [numeric, categorical]},
            "objective": {"type": "empirical_risk", "loss": loss, "l2": 0.01,
                          "data": {"table": table, "label": label}},
            "solver": {"iterations": 300_000, "seed": 1}}
    knots = np.array(KEYPOINTS)
    features = np.column_stack([np.ones(len(columns["x"])), hat_basis(columns["x"], knots),
                                one_hot(columns["c"], ["lo", "mid", "hi"])])
    rows, pairs = [], []
    if shape == "convex":
        rows.append((curvature_matrix(knots, 1, features.shape[1], -1.0), 0.0))
    if shape == "monotone":
        pairs = chain([1, 2, 3, 4, 5])
    if shape == "categorical":
        pairs = chain([6, 7, 8])
    optimum = exact(features, np.asarray(columns[label], dtype=float), loss, 0.01, rows, pairs)
    assert_optimal(spec, tmp_path, optimum, features, tmp_path / "train.csv")


def test_calibrated_lattice_reaches_the_exact_optimum(tmp_path):
    rng = np.random.default_rng(5)
    columns = {"a": rng.uniform(0, 10, 300), "b": rng.uniform(0, 1, 300)}
    columns["t"] = np.log1p(columns["a"]) - columns["b"] + rng.normal(0, 0.3, 300)
    table = write_table(tmp_path / "train", columns)
    knots = {"a": np.array([0.0, 2.0, 10.0]), "b": np.array([0.0, 1.0])}
    spec = {"bounds": {"lower": -BOX, "upper": BOX},
            "model": {"type": "calibrated_lattice", "lattice": {"sizes": [3, 2]}, "features": [
        {"column": "a", "keypoints": knots["a"].tolist(), "monotonic": "increasing"},
        {"column": "b", "keypoints": knots["b"].tolist(), "monotonic": "decreasing"}]},
        "objective": {"type": "empirical_risk", "loss": "squared",
                      "data": {"table": table, "label": "t"}},
        "solver": {"iterations": 300_000, "seed": 2}}
    points = np.column_stack([np.interp(columns["a"], knots["a"], [0, 1, 2]), columns["b"]])
    features = reference_simplex(points, [3, 2])
    # vertices (i, j) -> 2 i + j: increasing along i, decreasing along j
    pairs = [(0, 2), (2, 4), (1, 3), (3, 5), (1, 0), (3, 2), (5, 4)]
    optimum = exact(features, columns["t"], "squared", 0.0, [], pairs)
    assert_optimal(spec, tmp_path, optimum, features, tmp_path / "train.csv")
