"""The network kernels against a plain numpy network and finite differences: scores, the
softmax and binary heads, backpropagation through sparse and dense first layers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.kernels.network import (
    FULL_CHUNK,
    SOFTMAX,
    dense_rows,
    full_loss_gradient,
    loss_gradient,
)
from worker.kernels.network_game import _adagrad
from worker.losses import LOSSES
from worker.problem.network import Network


def numpy_scores(network: Network, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The network of worker.problem.network written with numpy: (n, d) -> (n, K)."""
    at, z = 0, x
    layers = len(network.sizes) - 1
    for layer, (n_in, n_out) in enumerate(zip(network.sizes[:-1], network.sizes[1:], strict=True)):
        weights = theta[at:at + n_in * n_out].reshape(n_in, n_out)
        at += n_in * n_out
        z = z @ weights
        if network.bias:
            z = z + theta[at:at + n_out]
            at += n_out
        if layer < layers - 1:
            z = np.maximum(z, 0.0)
    return z


def numpy_softmax_loss(scores: np.ndarray, labels: np.ndarray) -> float:
    """Sum over rows of log sum exp(s) - s_y."""
    top = scores.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(scores - top).sum(axis=1))
    return float((log_norm - scores[np.arange(len(labels)), labels.astype(int)]).sum())


def csr_parts(x: sp.csr_matrix):
    return x.indptr.astype(np.int64), x.indices.astype(np.int64), x.data.astype(np.float64)


def loss_and_gradient(network, theta, x, labels, rows, code):
    """The kernels' summed loss over ``rows`` and its gradient (P,)."""
    grad = np.zeros_like(theta)
    total = loss_gradient(network.arrays(), theta, *csr_parts(x), labels, np.zeros(0), rows, code,
                          1.0, grad)
    return total, grad


def problem(seed: int, sizes: tuple[int, ...], density: float, bias: bool = True):
    rng = np.random.default_rng(seed)
    network = Network(sizes, bias)
    theta = rng.normal(size=network.parameters) * 0.5
    x = sp.random(12, sizes[0], density=density, random_state=seed, format="csr")
    return network, theta, sp.csr_matrix(x), rng


@pytest.mark.parametrize("density", [0.05, 0.9])  # sparse first layer, and dense through BLAS
@pytest.mark.parametrize("sizes", [(6, 4), (6, 5, 3), (7, 4, 3, 2)])
def test_scores_match_numpy(sizes, density):
    network, theta, x, _ = problem(0, sizes, density)
    np.testing.assert_allclose(network.scores(theta, x),
                               numpy_scores(network, theta, x.toarray()), atol=1e-12)


def test_linear_network_is_x_dot_w():
    network, theta, x, _ = problem(1, (6, 1), 0.5, bias=False)
    np.testing.assert_allclose(network.scores(theta, x)[:, 0], x @ theta, atol=1e-12)


@pytest.mark.parametrize("density", [0.05, 0.9])
@pytest.mark.parametrize("sizes", [(6, 3), (6, 5, 3), (5, 4, 4, 3)])
def test_softmax_gradient_matches_finite_differences(sizes, density):
    network, theta, x, rng = problem(2, sizes, density)
    labels = rng.integers(0, sizes[-1], x.shape[0]).astype(np.float64)
    rows = np.array([0, 3, 3, 7, 11], dtype=np.int64)
    total, grad = loss_and_gradient(network, theta, x, labels, rows, SOFTMAX)
    scores = numpy_scores(network, theta, x.toarray()[rows])
    assert total == pytest.approx(numpy_softmax_loss(scores, labels[rows]), rel=1e-12)
    step = 1e-6
    for j in range(network.parameters):
        e = np.zeros_like(theta)
        e[j] = step
        up = numpy_softmax_loss(numpy_scores(network, theta + e, x.toarray()[rows]), labels[rows])
        down = numpy_softmax_loss(numpy_scores(network, theta - e, x.toarray()[rows]),
                                  labels[rows])
        assert grad[j] == pytest.approx((up - down) / (2 * step), abs=1e-6)


@pytest.mark.parametrize("loss", ["logistic", "squared", "squared_hinge"])
def test_binary_heads_backpropagate_the_loss_slope(loss):
    network, theta, x, rng = problem(3, (6, 5, 1), 0.6)
    labels = np.where(rng.random(x.shape[0]) < 0.5, -1.0, 1.0)
    rows = np.arange(x.shape[0], dtype=np.int64)
    record = LOSSES[loss]
    total, grad = loss_and_gradient(network, theta, x, labels, rows, record.code)

    def value(point):
        scores = numpy_scores(network, point, x.toarray())[:, 0]
        return float(record.reference_value(scores, labels).sum())

    assert total == pytest.approx(value(theta), rel=1e-10)
    for j in range(network.parameters):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        assert grad[j] == pytest.approx((value(theta + e) - value(theta - e)) / 2e-6, abs=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 30), st.floats(0.0, 1.0), st.integers(0, 2**31))
def test_dense_copies_hold_the_rows_or_nothing(batch, d, density, seed):
    x = sp.random(10, d, density=density, random_state=seed % 1000, format="csr")
    rows = np.random.default_rng(seed).integers(0, 10, batch).astype(np.int64)
    dense = dense_rows(*csr_parts(x), rows, d)
    if dense.shape[0]:
        np.testing.assert_array_equal(dense, x.toarray()[rows])
    else:
        assert x[rows].nnz < 0.1 * batch * d


def test_initial_weights_are_seeded_and_scaled():
    network = Network((64, 32, 10), True)
    first, again = network.initial(0), network.initial(0)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, network.initial(1))
    hidden = first[:64 * 32]
    assert np.abs(hidden).max() <= np.sqrt(6 / 64)
    assert np.count_nonzero(first[64 * 32:64 * 32 + 32]) == 0  # biases start at 0
    np.testing.assert_array_equal(Network((5, 1), False).initial(3), np.zeros(5))


@pytest.mark.parametrize(("gradient", "squares", "expected"), [
    (1e-170, (1e-170) ** 2, 0.5),     # the square underflowed to 0: no step, no error
    (0.0, 0.0, 0.5),                  # no gradient yet
    (0.0, 4.0, 0.5),                  # no gradient now
    (2.0, 4.0, 0.4),                  # 0.5 - 0.1 * 2 / 2
    (-200.0, 4.0, 1.0),               # clipped to the upper end
])
def test_adagrad_step_of_a_coordinate(gradient, squares, expected):
    assert _adagrad(0.5, gradient, squares, 0.1, 0.0, 1.0) == pytest.approx(expected)


@pytest.mark.parametrize(("sizes", "loss"), [((3, 4, 1), "logistic"), ((3, 4, 3), "softmax")])
def test_the_full_batch_is_the_mean_loss_and_its_gradient_over_every_chunk(sizes, loss):
    network, theta, _, rng = problem(4, sizes, 0.5)
    x = sp.csr_matrix(rng.normal(size=(FULL_CHUNK + 7, sizes[0])))   # two passes
    if loss == "softmax":
        code, labels = SOFTMAX, rng.integers(0, sizes[-1], x.shape[0]).astype(np.float64)
    else:
        code, labels = LOSSES[loss].code, np.where(rng.random(x.shape[0]) < 0.5, -1.0, 1.0)

    def value(point):
        scores = numpy_scores(network, point, x.toarray())
        total = numpy_softmax_loss(scores, labels) if code == SOFTMAX else \
            float(LOSSES[loss].reference_value(scores[:, 0], labels).sum())
        return total / x.shape[0]

    grad = np.full_like(theta, np.nan)                                # overwritten
    mean = full_loss_gradient(network.arrays(), theta, *csr_parts(x), labels, np.zeros(0), code,
                              grad)
    assert mean == pytest.approx(value(theta), rel=1e-12)
    for j in range(network.parameters):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        assert grad[j] == pytest.approx((value(theta + e) - value(theta - e)) / 2e-6, abs=1e-7)
