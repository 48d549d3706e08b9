"""Dense p's sampling through blocks of cumulative sums, and the iteration's prefetched example
draws, against plain numpy and the RNG's plain-Python stream."""

from __future__ import annotations

import numpy as np
import pytest

from tests.problems import random_problem
from worker.algorithms.run.arrays import column_indices, new_state, problem_arrays, run_config
from worker.kernels import distribution, layout
from worker.kernels.iteration import draw_examples
from worker.kernels.random import randint, uniform


def _dense_state(groups: int, seed: int):
    problem = random_problem("hinge", "ordering", d=2 * groups + 1, seed=seed)
    arrays = problem_arrays(problem, groups)
    cfg = run_config(arrays, mode=layout.MODE_LIGHT, gamma=1.0, eta_w=1.0, eta_p=0.5,
                     strong_convexity=0.0, minibatch=None, lazy=False)
    return arrays, cfg, new_state(arrays, np.zeros(problem.d), seed)


@pytest.mark.parametrize("groups", [1, 15, 16, 17, 63, 200])
@pytest.mark.parametrize("seed", [0, 1])
def test_dense_sampling_draws_what_a_search_of_the_cumulative_weights_draws(groups, seed):
    arrays, cfg, state = _dense_state(groups, seed)
    groups = state.log_w.shape[0]                         # the partition's count
    log_w = np.random.default_rng(seed).normal(scale=3.0, size=groups)
    log_w[::5] = -1e4                                     # weights that underflow to 0
    log_w[0] = 0.0
    state.log_w[:] = log_w
    rng = state.rng.copy()
    draws = 4000
    out = np.zeros(draws, dtype=np.int64)
    distribution.sample_groups(cfg, state, 1, draws, out)
    weights = np.exp(log_w - log_w.max())
    cumulative = np.cumsum(weights)
    r = np.array([uniform.py_func(rng) for _ in range(draws)]) * cumulative[-1]
    expected = np.searchsorted(cumulative, r, side="right")
    clear = np.abs(cumulative[None, :] - r[:, None]).min(axis=1) > 1e-12 * cumulative[-1]
    assert clear.sum() > 0.99 * draws
    np.testing.assert_array_equal(out[clear], expected[clear])
    assert np.all(weights[out] > 0)


@pytest.mark.parametrize("padded", [True, False], ids=["fixed-width rows", "CSR rows"])
def test_draw_examples_keeps_the_state_the_objective_draws_them_again_from(padded):
    problem = random_problem("hinge", "linear", d=8, n=60, seed=4)
    arrays = problem_arrays(problem, problem.m)
    if not padded:
        arrays = arrays._replace(x_width=0)
    state = new_state(arrays, np.zeros(problem.d), 9)
    before = state.rng.copy()
    draw_examples(arrays, state, 5)
    np.testing.assert_array_equal(state.example_rng, before)
    expected = before.copy()
    for _ in range(5):
        randint.py_func(expected, problem.n)
    np.testing.assert_array_equal(state.rng, expected)


def test_column_indices_are_uint32_when_they_fit():
    indices = np.array([0, 5, 2**32 - 2], dtype=np.int64)
    narrow = column_indices(indices, 2**32 - 1)
    assert narrow.dtype == np.uint32
    np.testing.assert_array_equal(narrow, indices)
    assert column_indices(indices, 2**32 + 1).dtype == np.int64
