"""The calibrators, the lattice map and simplex interpolation against numpy references and
against :mod:`worker.datasets.simplex` on the paper's shape; predictions that never
decrease along an increasing feature (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.datasets.simplex import simplex_interpolation
from worker.tables.calibrators import CategoricalCalibrator, NumericCalibrator
from worker.tables.columns import Table
from worker.tables.lattice import lattice_points, lattice_strides, simplex_matrix
from worker.tables.model import LinearTable


def table(**columns) -> Table:
    """A table of the given columns."""
    return Table.of(pa.table(columns), "objective.data.table")


def reference_simplex(points: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Dense simplex weights (n, prod(sizes)), one row at a time in plain numpy."""
    strides = lattice_strides(sizes)
    dense = np.zeros((points.shape[0], math.prod(sizes)))
    for r, point in enumerate(points):
        cell = np.minimum(np.floor(point), np.array(sizes) - 2)
        fraction = point - cell
        order = np.argsort(-fraction, kind="stable")
        vertex = int(cell @ strides)
        sorted_fraction = np.concatenate([[1.0], fraction[order], [0.0]])
        dense[r, vertex] += sorted_fraction[0] - sorted_fraction[1]
        for k, axis in enumerate(order):
            vertex += int(strides[axis])
            dense[r, vertex] += sorted_fraction[k + 1] - sorted_fraction[k + 2]
    return dense


def test_segments_interpolate_like_numpy_interp_and_clamp_beyond_the_keypoints():
    rng = np.random.default_rng(0)
    keypoints = np.sort(rng.uniform(-5, 5, 7))
    outputs = rng.normal(size=7)
    values = np.concatenate([rng.uniform(-8, 8, 500), keypoints, [-1e9, 1e9]])
    calibrator = NumericCalibrator("x", keypoints)
    segment, position = calibrator.segments(table(x=values))
    calibrated = (1 - position) * outputs[segment] + position * outputs[segment + 1]
    np.testing.assert_allclose(calibrated, np.interp(values, keypoints, outputs), atol=1e-12)
    assert ((position >= 0) & (position <= 1)).all()


def test_paper_shape_matches_the_generator_of_unit_lattices_exactly():
    rng = np.random.default_rng(1)
    x = rng.random((3000, 12))
    x[:5] = [0.0] * 12, [1.0] * 12, [0.5] * 12, np.linspace(0, 1, 12), [0.25] * 12
    calibrators = [NumericCalibrator(f"x{j}", np.array([0.0, 1.0])) for j in range(12)]
    rows = table(**{f"x{j}": x[:, j] for j in range(12)})
    ours = simplex_matrix(lattice_points(calibrators, [2] * 12, rows), [2] * 12)
    theirs = simplex_interpolation(x)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.data, theirs.data)


@pytest.mark.parametrize("sizes", [[3], [2, 3], [4, 2, 3], [3, 3, 3, 2]])
def test_simplex_weights_match_the_reference_and_reproduce_the_point(sizes):
    rng = np.random.default_rng(len(sizes))
    points = rng.random((400, len(sizes))) * (np.array(sizes) - 1)
    points[:20] = np.round(points[:20])               # vertices and ties
    matrix = simplex_matrix(points, sizes)
    np.testing.assert_allclose(matrix.toarray(), reference_simplex(points, sizes), atol=1e-12)
    coordinates = np.array(np.unravel_index(np.arange(math.prod(sizes)), sizes)).T
    np.testing.assert_allclose(matrix @ coordinates, points, atol=1e-12)
    assert matrix.data.min() >= -1e-15
    np.testing.assert_allclose(np.asarray(matrix.sum(axis=1)).ravel(), 1.0, atol=1e-12)


def monotone_lattice(sizes: list[int], increasing: int, rng: np.random.Generator) -> np.ndarray:
    """Lattice values (C order) that increase along axis ``increasing``."""
    steps = rng.random(sizes)
    return np.cumsum(steps, axis=increasing).ravel() + rng.normal(size=1)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(2, 4), min_size=1, max_size=3),
       keypoints=st.integers(2, 6), seed=st.integers(0, 2**31))
def test_lattice_predictions_never_decrease_along_an_increasing_feature(sizes, keypoints, seed):
    rng = np.random.default_rng(seed)
    dims = len(sizes)
    calibrators = [NumericCalibrator(f"x{j}", np.sort(rng.choice(np.arange(-20, 20), keypoints,
                                                                 replace=False)).astype(float))
                   for j in range(dims)]
    values = monotone_lattice(sizes, 0, rng)
    grid = np.linspace(-30.0, 30.0, 241)               # between and beyond the keypoints
    others = rng.uniform(-25, 25, (7, dims))
    for row in others:
        raw = np.tile(row, (grid.size, 1))
        raw[:, 0] = grid
        rows = table(**{f"x{j}": raw[:, j] for j in range(dims)})
        scores = simplex_matrix(lattice_points(calibrators, sizes, rows), sizes) @ values
        assert (np.diff(scores) >= -1e-12).all()


def test_curvature_rows_hold_for_a_convex_calibrator_and_fail_for_a_concave_one():
    keypoints = np.array([0.0, 1.0, 3.0, 4.0, 8.0])
    rows, outputs, values = NumericCalibrator("x", keypoints, convexity="convex").curvature_rows()
    matrix = np.zeros((3, 5))
    np.add.at(matrix, (rows, outputs), values)
    assert (matrix @ keypoints**2 <= 1e-12).all()
    assert (matrix @ -(keypoints**2) > 0).all()


@settings(max_examples=40, deadline=None)
@given(keypoints=st.lists(st.integers(-20, 20), min_size=2, max_size=8, unique=True),
       decreasing=st.booleans(), seed=st.integers(0, 2**31))
def test_linear_predictions_follow_a_monotone_calibrator_everywhere(keypoints, decreasing,
                                                                    seed):
    rng = np.random.default_rng(seed)
    knots = np.sort(np.array(keypoints, dtype=float))
    direction = "decreasing" if decreasing else "increasing"
    model = LinearTable((NumericCalibrator("x", knots, direction),
                         CategoricalCalibrator("c", ("p", "q"))))
    outputs = np.cumsum(rng.random(knots.size)) * (-1 if decreasing else 1)
    w = np.concatenate([[rng.normal()], outputs, rng.normal(size=2)])
    grid = np.linspace(-30.0, 30.0, 241)                 # between and beyond the keypoints
    for category in ("p", "q"):
        rows = Table.of(pa.table({"c": [category] * grid.size, "x": grid}), "t")
        scores = model.features(rows) @ w
        steps = np.diff(scores) * (-1 if decreasing else 1)
        assert (steps >= -1e-12).all()
