"""The order-isotonic kernel against PAVA on chains and the KKT conditions on any order, and
its start from a nearby point's level sets against the regression from scratch."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression, linprog

from worker.kernels.isotonic import closure_flow, isotonic_from, isotonic_on_order


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


def hypercube(dims: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges v -> v + 2^b of the hypercube's 2^dims vertices."""
    return edges([(v, v | 1 << b) for v in range(2**dims) for b in range(dims)
                  if not v & 1 << b])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.floats(0.0, 4.0),
       st.sampled_from([1e-3, 0.1, 1.0, 10.0]), st.sampled_from(["projection", "rounded", "any"]))
def test_the_start_from_a_nearby_point_gives_the_regression(seed, n, density, move, near):
    rng = np.random.default_rng(seed)
    if seed % 2:
        tails, heads = hypercube(1 + seed % 6)
        n = int(max(tails.max(initial=0), heads.max(initial=0))) + 1
    else:
        tails, heads = rng.integers(n, size=(2, int(density * n)))
        keep = tails != heads
        tails, heads = tails[keep], heads[keep]     # cycles allowed: a preorder
    previous = isotonic_on_order(rng.normal(0.0, 3.0, n), tails, heads)[0]
    if near == "rounded":
        previous = np.round(previous)               # coarser level sets
    elif near == "any":
        previous = rng.normal(0.0, 3.0, n)          # not even ordered: still exact
    y = previous + rng.normal(0.0, move, n)
    np.testing.assert_allclose(isotonic_from(y, tails, heads, previous),
                               isotonic_on_order(y, tails, heads)[0], atol=1e-9)


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


def imbalance(supply, flows, tails, heads):
    """sum_v |supply_v - out_v + in_v| for edge flows (k,)."""
    n = supply.shape[0]
    return np.abs(supply - np.bincount(tails, flows, minlength=n)
                  + np.bincount(heads, flows, minlength=n)).sum()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.floats(0.0, 4.0))
def test_closure_flow_leaves_the_least_imbalance_an_lp_finds(seed, n, density):
    # min sum |s - out + in| over flows >= 0, as an LP in (flows, t) with t >= |.|
    rng = np.random.default_rng(seed)
    tails, heads = rng.integers(n, size=(2, int(density * n)))
    keep = tails != heads
    tails, heads = tails[keep].astype(np.int64), heads[keep].astype(np.int64)
    supply = rng.normal(0.0, 3.0, n)
    flows = closure_flow(supply, tails, heads)
    k = tails.size
    net = np.zeros((n, k))
    net[tails, np.arange(k)] -= 1.0
    net[heads, np.arange(k)] += 1.0
    eye = np.eye(n)
    lp = linprog(np.concatenate([np.zeros(k), np.ones(n)]),
                 A_ub=np.block([[net, -eye], [-net, -eye]]),
                 b_ub=np.concatenate([-supply, supply]), bounds=(0, None), method="highs")
    assert lp.status == 0
    assert flows.min(initial=0.0) >= 0.0
    assert abs(imbalance(supply, flows, tails, heads) - lp.fun) <= 1e-7 * (1 + abs(lp.fun))


def test_closure_flow_matches_the_isotonic_multipliers_imbalance_on_a_lattice():
    dims = 6
    index = np.arange(2**dims)
    low = [(index >> b) & 1 == 0 for b in range(dims)]
    tails = np.concatenate([index[mask] for mask in low])
    heads = np.concatenate([index[mask] | (1 << b) for b, mask in enumerate(low)])
    supply = np.random.default_rng(0).normal(size=index.size)
    _, multipliers = isotonic_on_order(supply, tails, heads)
    np.testing.assert_allclose(imbalance(supply, closure_flow(supply, tails, heads), tails, heads),
                               imbalance(supply, multipliers, tails, heads), rtol=1e-9)
