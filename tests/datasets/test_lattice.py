"""Tests of worker.datasets.lattice and .simplex: simplex interpolation against a plain
loop, the truth, the sampled pairs and the written spec."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pytest
import scipy.sparse as sp

from worker.datasets import lattice as lp
from worker.datasets import simplex

DIMS = [1, 2, 3, 5, 8, 12]


def reference_interpolation(x: np.ndarray) -> np.ndarray:
    """Plain-loop simplex interpolation, dense (n, 2**D): walk the axes by decreasing x."""
    n, dims = x.shape
    dense = np.zeros((n, 2**dims))
    for row in range(n):
        axes = sorted(range(dims), key=lambda axis: -x[row, axis])
        vertex, previous = 0, 1.0
        for axis in axes:
            dense[row, vertex] += previous - x[row, axis]
            vertex += 2 ** (dims - 1 - axis)
            previous = x[row, axis]
        dense[row, vertex] += previous
    return dense


def random_monotone_lattice(dims: int, rng: np.random.Generator) -> np.ndarray:
    """C-order lattice values, strictly increasing along every edge (cumsum along each axis)."""
    values = rng.random([2] * dims) + 0.01
    for axis in range(dims):
        values = np.cumsum(values, axis=axis)
    return values.ravel()


def edge_increments(values: np.ndarray, dims: int) -> np.ndarray:
    """``value(v + e_k) - value(v)`` over all D * 2**(D-1) lattice edges."""
    grid = values.reshape([2] * dims)
    return np.concatenate([np.diff(grid, axis=axis).ravel() for axis in range(dims)])


def points(dims: int, rng: np.random.Generator, n: int = 300) -> np.ndarray:
    """Random points in [0, 1]^D plus lattice vertices, ties and 0/1 coordinates."""
    x = rng.random((n, dims))
    x[:10] = np.round(x[:10])
    x[10:20, 0] = x[10:20, -1]
    x[20:30, rng.integers(dims)] = 0.0
    x[30:40, rng.integers(dims)] = 1.0
    return x


# --------------------------------------------------------------------------- interpolation


@pytest.mark.parametrize("dims", DIMS)
def test_interpolation_matches_plain_loop(dims):
    x = points(dims, np.random.default_rng(dims))
    np.testing.assert_allclose(
        simplex.simplex_interpolation(x).toarray(), reference_interpolation(x), atol=1e-15
    )


@pytest.mark.parametrize("dims", DIMS)
def test_weights_are_a_convex_combination_of_d_plus_1_sorted_vertices(dims):
    phi = simplex.simplex_interpolation(points(dims, np.random.default_rng(dims)))
    assert phi.shape == (300, 2**dims) and phi.format == "csr" and phi.dtype == np.float64
    assert np.all(np.diff(phi.indptr) == dims + 1)
    assert phi.data.min() >= 0.0
    np.testing.assert_allclose(np.asarray(phi.sum(axis=1)).ravel(), 1.0, atol=1e-14)
    assert np.all(np.diff(phi.indices.reshape(-1, dims + 1), axis=1) > 0)
    assert phi.has_sorted_indices


def test_random_points_have_d_plus_1_nonzero_weights():
    phi = simplex.simplex_interpolation(np.random.default_rng(0).random((1000, 12)))
    assert np.count_nonzero(phi.data) == 1000 * 13


@pytest.mark.parametrize("dims", DIMS)
def test_affine_functions_are_reproduced_exactly(dims):
    rng = np.random.default_rng(100 + dims)
    x = points(dims, rng)
    slope, offset = rng.standard_normal(dims), rng.standard_normal()
    on_lattice = simplex.lattice_vertices(dims) @ slope + offset
    np.testing.assert_allclose(
        simplex.simplex_interpolation(x) @ on_lattice, x @ slope + offset, atol=1e-12
    )


@pytest.mark.parametrize("dims", DIMS)
def test_flattening_is_c_order_ravel_multi_index(dims):
    vertices = simplex.lattice_vertices(dims)
    flat = np.ravel_multi_index(vertices.astype(int).T, [2] * dims)
    np.testing.assert_array_equal(flat, np.arange(2**dims))
    phi = simplex.simplex_interpolation(vertices)
    np.testing.assert_allclose(phi.toarray(), np.eye(2**dims), atol=0)


def test_flattening_of_one_vertex():
    x = np.array([[1.0, 0.0, 0.0, 1.0, 1.0]])  # index 16 + 2 + 1
    row = simplex.simplex_interpolation(x).toarray()[0]
    assert row[19] == 1.0 and row.sum() == 1.0


@pytest.mark.parametrize("dims", DIMS)
def test_monotone_lattice_interpolates_to_increasing_function(dims):
    rng = np.random.default_rng(200 + dims)
    lattice = random_monotone_lattice(dims, rng)
    assert edge_increments(lattice, dims).min() > 0
    x = points(dims, rng)
    before = simplex.simplex_interpolation(x) @ lattice
    for axis in range(dims):
        moved = x.copy()
        moved[:, axis] = np.minimum(1.0, x[:, axis] + rng.uniform(0.05, 0.5, len(x)))
        raised = moved[:, axis] > x[:, axis]
        after = simplex.simplex_interpolation(moved) @ lattice
        assert np.all(after[raised] > before[raised])
        np.testing.assert_allclose(after[~raised], before[~raised], atol=1e-12)


@pytest.mark.parametrize(
    "bad",
    [
        np.array([[0.5, 1.5]]),
        np.array([[-0.1, 0.5]]),
        np.array([[np.nan, 0.5]]),
        np.array([0.5, 0.5]),
        np.zeros((3, 31)),
    ],
)
def test_bad_points_are_rejected(bad):
    with pytest.raises(ValueError):
        simplex.simplex_interpolation(bad)


# --------------------------------------------------------------------------- truth and pairs


@pytest.mark.parametrize("dims", [2, 5, 12])
def test_truth_is_monotone_with_range_in_unit_interval(dims):
    truth = lp.make_truth(dims)
    values = truth.lattice_values()
    assert edge_increments(values, dims).min() > 0
    assert values[0] == pytest.approx(0.0, abs=1e-12) and values[-1] == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    x = rng.random((500, dims))
    for axis in range(dims):
        moved = x.copy()
        moved[:, axis] = np.minimum(1.0, x[:, axis] + 0.1)
        assert np.all(truth(moved) >= truth(x))


def test_noiseless_pairs_are_ordered_by_truth():
    truth = lp.make_truth(6)
    positive, negative = lp.sample_pairs(2000, truth, 0.0, np.random.default_rng(0))
    assert np.all(truth(positive) >= truth(negative))


def test_noise_flips_some_pairs():
    truth = lp.make_truth(12)
    positive, negative = lp.sample_pairs(20_000, truth, 0.05, np.random.default_rng(0))
    agreement = np.mean(truth(positive) > truth(negative))
    assert 0.8 < agreement < 0.95


def test_problem_is_deterministic_per_seed_and_truth_is_shared_across_seeds():
    first = lp.make_ranking_problem(500, D=4, seed=3)
    again = lp.make_ranking_problem(500, D=4, seed=3)
    other = lp.make_ranking_problem(500, D=4, seed=4)
    for left, right in zip(first[:2], again[:2], strict=True):
        assert (left != right).nnz == 0
    assert (first[0] != other[0]).nnz > 0
    np.testing.assert_array_equal(first[2].lattice_values(), other[2].lattice_values())
    assert first[0].shape == first[1].shape == (500, 16)


# --------------------------------------------------------------------------- spec and CLI


def test_written_spec_follows_design_section_3(tmp_path):
    spec_path = lp.write_problem(
        tmp_path / "out", 300, D=5, seed=7, iterations=1000, algorithm="fulltouch"
    )
    spec = json.loads(spec_path.read_text())
    data = spec["objective"].pop("data")
    assert spec["dimension"] == 32 and spec["spec_version"] == 1
    assert spec["bounds"] == {"lower": -10, "upper": 10}
    assert spec["objective"] == {"type": "empirical_risk", "loss": "pairwise_hinge", "l2": 0}
    assert spec["constraints"] == [
        {"type": "monotone_lattice", "shape": [2] * 5, "increasing": [0, 1, 2, 3, 4]}
    ]
    assert spec["solver"] == {
        "algorithm": "fulltouch",
        "iterations": 1000,
        "seed": 7,
        "gamma": 1.0,
        "eta_w": 16.0,
        "eta_p": 0.0625,
    }
    expected = lp.make_ranking_problem(300, D=5, seed=7)
    for role, matrix in zip(("positive", "negative"), expected[:2], strict=True):
        assert data[role]["format"] == "npz" and data[role]["uri"].startswith("file:///")
        path = Path(unquote(urlparse(data[role]["uri"]).path))
        assert path == tmp_path / "out" / f"{role}.npz"
        assert (sp.load_npz(path) != matrix).nnz == 0
