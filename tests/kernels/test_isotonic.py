"""The order-isotonic kernel against PAVA on chains and the KKT conditions on any order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression

from worker.kernels.isotonic import isotonic_on_order


def kkt_residuals(y, x, multipliers, tails, heads):
    """(stationarity, most negative multiplier, worst violation, complementarity) residuals."""
    n = y.shape[0]
    net = np.bincount(tails, multipliers, minlength=n) - np.bincount(heads, multipliers,
                                                                     minlength=n)
    gaps = x[tails] - x[heads]
    return (np.max(np.abs(y - x - net), initial=0.0), np.min(multipliers, initial=0.0),
            np.max(gaps, initial=0.0), np.max(np.abs(multipliers * gaps), initial=0.0))


def edges(pairs):
    array = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return array[:, 0].copy(), array[:, 1].copy()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=40))
def test_chain_matches_pava(values):
    y = np.array(values)
    tails = np.arange(y.size - 1, dtype=np.int64)
    x, multipliers = isotonic_on_order(y, tails, tails + 1)
    np.testing.assert_allclose(x, isotonic_regression(y).x, rtol=0, atol=1e-9 * (1 + abs(y).max()))
    assert kkt_residuals(y, x, multipliers, tails, tails + 1)[0] <= 1e-9 * (1 + abs(y).max())


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.floats(0.0, 4.0))
def test_random_orders_satisfy_kkt(seed, n, density):
    rng = np.random.default_rng(seed)
    k = int(density * n)
    tails, heads = rng.integers(n, size=(2, k))
    keep = tails != heads
    tails, heads = tails[keep], heads[keep]         # cycles allowed: a preorder
    y = rng.normal(0.0, 3.0, n)
    x, multipliers = isotonic_on_order(y, tails, heads)
    stationarity, least, violation, slack = kkt_residuals(y, x, multipliers, tails, heads)
    assert stationarity <= 1e-9 and least >= -1e-12 and violation <= 1e-12 and slack <= 1e-9


def test_two_parents_pool_with_their_child():
    # x0 <= x2, x1 <= x2 with y = (3, 2, 1): all pool at the mean 2.
    tails, heads = edges([[0, 2], [1, 2]])
    x, multipliers = isotonic_on_order(np.array([3.0, 2.0, 1.0]), tails, heads)
    np.testing.assert_allclose(x, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(multipliers, [1.0, 0.0], atol=1e-12)


def test_split_block_keeps_the_order_between_its_parts():
    # Diamond 0 <= 1, 0 <= 2, 1 <= 3, 2 <= 3 with y = (0, 5, -1, 1): 1 and 3 pool at 3,
    # 0 and 2 pool at -0.5.
    tails, heads = edges([[0, 1], [0, 2], [1, 3], [2, 3]])
    x, _ = isotonic_on_order(np.array([0.0, 5.0, -1.0, 1.0]), tails, heads)
    np.testing.assert_allclose(x, [-0.5, 3.0, -0.5, 3.0])


def test_no_edges_returns_the_point():
    y = np.array([2.0, -1.0])
    x, multipliers = isotonic_on_order(y, np.zeros(0, np.int64), np.zeros(0, np.int64))
    np.testing.assert_array_equal(x, y)
    assert multipliers.shape == (0,)
