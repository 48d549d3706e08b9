"""A calibrated model's spec compiles to exactly the problem of the equivalent hand-built
spec: features, labels, groups and constraint rows computed here with plain numpy (and, for
the paper's lattice, with :mod:`worker.datasets.simplex`)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from tests.tables.raw import curvature_matrix, hat_basis, one_hot, write_table
from tests.tables.test_transforms import reference_simplex
from worker.datasets.lattice import PAPER_DIMS, make_truth, problem_spec, sample_pairs
from worker.datasets.simplex import simplex_interpolation
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec
from worker.spec.tables import TABLE_FORMATS
from worker.tables.lower import lower_tables
from worker.tables.read import TABLE_READERS


def compiled_pair(model_spec: dict, hand_built: dict, root):
    """(problem of the model spec through the lowering, problem of the hand-built spec)."""
    lowered = lower_tables(parse_spec(model_spec), DataSource([root], settings=data_settings()))
    assert lowered is not None
    return (compile_problem(lowered.spec, lowered.source),
            compile_problem(parse_spec(hand_built), DataSource([root], data_settings())))


def assert_same_problem(ours, theirs, exact: bool) -> None:
    """Equal objective rows and labels, constraint rows, box and rate groups."""
    same = np.testing.assert_array_equal if exact else \
        (lambda a, b: np.testing.assert_allclose(a, b, rtol=0, atol=1e-14))
    assert ours.objective.kind == theirs.objective.kind
    for a, b in [(ours.objective.features, theirs.objective.features),
                 (ours.constraints.matrix, theirs.constraints.matrix)]:
        assert a.shape == b.shape
        same(a.toarray(), b.toarray())
    same(ours.objective.labels, theirs.objective.labels)
    same(ours.constraints.rhs, theirs.constraints.rhs)
    same(ours.lower, theirs.lower)
    same(ours.upper, theirs.upper)
    assert (ours.rates is None) == (theirs.rates is None)
    if ours.rates is not None:
        same(ours.rates.features.toarray(), theirs.rates.features.toarray())
        for form in ("proxy", "relaxed"):
            a, b = getattr(ours.rates, form), getattr(theirs.rates, form)
            same(a.constant, b.constant)
            same(a.plus.toarray(), b.plus.toarray())
            same(a.minus.toarray(), b.minus.toarray())


def raw_columns(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(-1, 12, n), rng.integers(0, 9, n)
    c = rng.choice(["a", "b", "c"], n)
    y = np.where(0.3 * np.minimum(x, 8) - 0.2 * z + (c == "b") + rng.normal(0, 1, n) > 0, 1, -1)
    return {"x": x, "z": z, "c": c, "y": y, "unused": rng.random(n)}


def test_every_table_format_the_spec_accepts_has_a_reader():
    assert set(TABLE_READERS) == set(TABLE_FORMATS)


@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_calibrated_linear_compiles_to_the_hand_built_problem(tmp_path, fmt):
    columns = raw_columns(300, 0)
    x, z, c, y = (columns[k] for k in "xzcy")
    table = write_table(tmp_path / "train", columns, fmt)
    groups = {"a": {"column": "c", "equals": "a"}, "high_z": {"column": "z", "gte": 5}}
    rate = {"type": "rate", "lhs": {"metric": "positive_prediction_rate", "group": "a"},
            "op": "<=", "rhs": 0.7}
    spec = {"bounds": {"lower": -5, "upper": 5},
            "model": {"type": "calibrated_linear", "features": [
                {"column": "x", "keypoints": [0, 2.5, 5, 10], "monotonic": "increasing",
                 "convexity": "concave"},
                {"column": "z", "keypoints": 4, "monotonic": "decreasing"},
                {"column": "c", "categories": "auto", "monotonic": "increasing",
                 "monotonic_order": ["b", "a", "c"]}]},
            "objective": {"type": "empirical_risk", "loss": "hinge", "l2": 0.1,
                          "data": {"table": table, "label": "y", "groups": groups}},
            "constraints": [rate], "solver": {"algorithm": "proxy_lagrangian"}}
    kx, kz = np.array([0, 2.5, 5, 10]), np.unique(np.quantile(z, np.linspace(0, 1, 4)))
    features = np.column_stack([np.ones(x.size), hat_basis(x, kx), hat_basis(z, kz),
                                one_hot(c, ["a", "b", "c"])])
    d = features.shape[1]
    oc = 1 + kx.size + kz.size
    np.savez(tmp_path / "features.npz", features=features)
    np.save(tmp_path / "labels.npy", y.astype(float))
    np.save(tmp_path / "a.npy", (c == "a").astype(float))
    np.save(tmp_path / "high.npy", (z >= 5).astype(float))
    concave = curvature_matrix(kx, 1, d, -1.0)
    hand = {"bounds": spec["bounds"], "objective": {
        "type": "empirical_risk", "loss": "hinge", "l2": 0.1, "data": {
            "features": {"uri": (tmp_path / "features.npz").as_uri()},
            "labels": {"uri": (tmp_path / "labels.npy").as_uri()},
            "groups": {"a": {"uri": (tmp_path / "a.npy").as_uri()},
                       "high_z": {"uri": (tmp_path / "high.npy").as_uri()}}}},
        "constraints": [rate,
                        {"type": "ordering", "chain": [1, 2, 3, 4]},
                        {"type": "linear", "A": concave.tolist(), "b": [0.0, 0.0]},
                        {"type": "ordering", "chain": list(range(4 + kz.size, 4, -1))},
                        {"type": "ordering", "chain": [oc + 1, oc, oc + 2]}],
        "solver": spec["solver"]}
    assert_same_problem(*compiled_pair(spec, hand, tmp_path), exact=False)


def test_the_paper_lattice_from_raw_pairs_compiles_to_the_paper_spec_exactly(tmp_path):
    rng = np.random.default_rng(3)
    positive, negative = sample_pairs(2000, make_truth(PAPER_DIMS, 0), 0.05, rng)
    names = [f"f{j}" for j in range(PAPER_DIMS)]
    tables = {side: write_table(tmp_path / side, dict(zip(names, x.T, strict=True)), "parquet")
              for side, x in (("positive", positive), ("negative", negative))}
    sp.save_npz(tmp_path / "pos.npz", simplex_interpolation(positive))
    sp.save_npz(tmp_path / "neg.npz", simplex_interpolation(negative))
    hand = problem_spec(tmp_path / "pos.npz", tmp_path / "neg.npz", PAPER_DIMS, seed=0,
                        iterations=1000, algorithm="lighttouch", name="paper")
    spec = {**hand, "model": {"type": "calibrated_lattice", "features": [
        {"column": name, "keypoints": [0, 1], "monotonic": "increasing"} for name in names]},
        "constraints": []}
    del spec["dimension"]
    spec["objective"] = {**hand["objective"], "data": tables}
    assert_same_problem(*compiled_pair(spec, hand, tmp_path), exact=True)


def test_a_lattice_with_a_decreasing_input_compiles_to_the_hand_built_problem(tmp_path):
    rng = np.random.default_rng(4)
    columns = {"u": rng.uniform(-2, 12, 400), "v": rng.uniform(0, 1, 400),
               "t": rng.normal(size=400)}
    keypoints = {"u": np.array([0.0, 4.0, 6.0, 10.0]), "v": np.array([0.0, 0.5, 1.0])}
    sizes = [3, 2]
    spec = {"model": {"type": "calibrated_lattice", "lattice": {"sizes": sizes}, "features": [
        {"column": "u", "keypoints": keypoints["u"].tolist(), "monotonic": "increasing"},
        {"column": "v", "keypoints": keypoints["v"].tolist(), "monotonic": "decreasing"}]},
        "objective": {"type": "empirical_risk", "loss": "squared",
                      "data": {"table": write_table(tmp_path / "t", columns), "label": "t"}}}
    points = np.column_stack([
        np.interp(columns[name], keypoints[name], np.linspace(0, size - 1, keypoints[name].size))
        for name, size in zip("uv", sizes, strict=True)])
    np.save(tmp_path / "x.npy", reference_simplex(points, sizes))
    np.save(tmp_path / "y.npy", columns["t"])
    hand = {"objective": {"type": "empirical_risk", "loss": "squared", "data": {
        "features": {"uri": (tmp_path / "x.npy").as_uri()},
        "labels": {"uri": (tmp_path / "y.npy").as_uri()}}},
        "constraints": [{"type": "monotone_lattice", "shape": sizes, "increasing": [0],
                         "decreasing": [1]}]}
    assert_same_problem(*compiled_pair(spec, hand, tmp_path), exact=False)
