"""The game kernels: TFCO's published lambda-player sequences, stationarity, the Lagrangian
multiplier projection, and the whole game step against a numpy reference."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tests import reference
from tests.problems import random_problem
from worker.algorithms.run.arrays import DOG_START, problem_arrays
from worker.algorithms.run.game_rounds import rate_arrays
from worker.algorithms.run.game_start import initial_state
from worker.algorithms.run.step_rule import UNTIMED_STEPS, probe_steps
from worker.kernels import games as games_kernels
from worker.kernels.layout import STEP_ADAGRAD_NORM, STEP_DOG, STEP_SCHEDULE
from worker.problem.compiled import CompiledProblem
from worker.problem.rates import build_rate_set

CONSTANT_CONSTRAINTS = np.array([0.6, -0.1, 0.4])
FLOOR = math.log(1e-3 / 4)

# TFCO, proxy_lagrangian_optimizer_test.py, test_multiplicative_swap_proxy_lagrangian_optimizer:
# constant constraints (0.6, -0.1, 0.4), initial_multiplier_radius 0.8, constraint step 1.0.
TFCO_SWAP_STATES = [
    [[0.4, 0.4, 0.4, 0.4], [0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2]],
    [[0.36999014, 0.38528351, 0.38528351, 0.38528351],
     [0.23517483, 0.21720297, 0.21720297, 0.21720297],
     [0.17774131, 0.18882719, 0.18882719, 0.18882719],
     [0.21709373, 0.20868632, 0.20868632, 0.20868632]],
    [[0.33972109, 0.36811863, 0.37118462, 0.36906575],
     [0.27114826, 0.23738228, 0.23376693, 0.23626491],
     [0.15712313, 0.17641793, 0.17858959, 0.17708679],
     [0.23200752, 0.21808115, 0.21645886, 0.21758255]],
]
# ... test_multiplicative_external_proxy_lagrangian_optimizer, same problem.
TFCO_EXTERNAL_STATES = [[0.4, 0.2, 0.2, 0.2],
                        [0.32160644, 0.29300257, 0.14550077, 0.23989022],
                        [0.23910893, 0.3969348, 0.09788292, 0.26607335]]


def test_swap_regret_player_reproduces_tfco_and_is_stationary():
    log_m = np.log(np.array(TFCO_SWAP_STATES[0]))
    lam = np.full(4, 0.25)
    games_kernels.stationary_distribution(log_m, lam)
    for expected in TFCO_SWAP_STATES[1:]:
        games_kernels.swap_regret_update(log_m, lam, CONSTANT_CONSTRAINTS, 1.0, FLOOR)
        np.testing.assert_allclose(np.exp(log_m), expected, rtol=0, atol=1e-6)
        np.testing.assert_allclose(np.exp(log_m) @ lam, lam, rtol=0, atol=1e-9)
        assert lam.sum() == pytest.approx(1.0, abs=1e-12)


def test_external_regret_player_reproduces_tfco():
    log_lam = np.log(np.array(TFCO_EXTERNAL_STATES[0]))
    lam = np.exp(log_lam)
    for expected in TFCO_EXTERNAL_STATES[1:]:
        games_kernels.external_regret_update(log_lam, lam, CONSTANT_CONSTRAINTS, 1.0, FLOOR)
        np.testing.assert_allclose(lam, expected, rtol=0, atol=1e-6)


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, (5, 5), elements=st.floats(-30, 5)))
def test_stationary_distribution_of_any_floored_matrix(logits):
    log_m = logits.copy()
    games_kernels.normalize_log_columns(log_m, math.log(1e-3 / 5))
    matrix = np.exp(log_m)
    np.testing.assert_allclose(matrix.sum(axis=0), 1.0, atol=1e-12)
    lam = np.full(5, 0.2)
    games_kernels.stationary_distribution(log_m, lam)
    assert np.all(lam >= 0) and lam.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(matrix @ lam, lam, rtol=0, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, 7, elements=st.floats(-5, 5)), st.floats(0.01, 10))
def test_multiplier_projection_is_the_euclidean_projection(values, radius):
    lam = np.concatenate([[1.0], values])
    games_kernels.project_multipliers(lam, radius)
    assert lam[0] == 1.0 and np.all(lam[1:] >= 0) and lam[1:].sum() <= radius + 1e-9
    # optimality: no feasible direction decreases ||lam - values||, checked against a grid
    # of the KKT form lam = max(values - tau, 0) with tau >= 0 (tau > 0 only at the radius)
    tau = 0.0 if np.maximum(values, 0).sum() <= radius else \
        max(values - lam[1:])
    np.testing.assert_allclose(lam[1:], np.maximum(values - tau, 0.0), atol=1e-9)


def small_rate_problem(seed: int = 0) -> CompiledProblem:
    """A hinge problem with linear constraints and two rate constraints over its examples."""
    base = random_problem("hinge", "linear", d=6, n=40, seed=seed)
    rng = np.random.default_rng(seed)
    group = rng.uniform(size=40) < 0.5
    positive = np.flatnonzero(base.objective.labels > 0)
    in_group = positive[group[positive]]
    pieces = [  # g_0 = 0.9 TPR(all) - TPR(group); g_1 = PPR(all) - 0.7
        (0, positive, np.full(positive.size, 0.9 / positive.size), np.ones(positive.size)),
        (0, in_group, np.full(in_group.size, -1.0 / in_group.size), np.ones(in_group.size)),
        (1, np.arange(40), np.full(40, 1 / 40), np.ones(40)),
    ]
    rates = build_rate_set(base.objective.features, pieces, np.array([0.0, -0.7]))
    return CompiledProblem(base.objective, base.constraints, base.lower, base.upper,
                           rates=rates)


def reference_game(problem, cfg, steps, seed, formulation):
    """Algorithm 2 / the Lagrangian game, one sample at a time, in dense numpy; indicators
    bounded by the hinge, or by the ramp (the hinge clipped at 1, flat above)."""
    rng = reference.Xoroshiro(seed)
    o, rates = problem.objective, problem.rates
    form = rates.relaxed if formulation == games_kernels.LAGRANGIAN else rates.proxy
    x, xr = o.features.toarray(), rates.features.toarray()
    a, b = problem.constraints.matrix.toarray(), problem.constraints.rhs
    plus, minus = form.plus.toarray(), form.minus.toarray()
    state = initial_state(np.zeros(problem.d), problem.m_total, formulation, seed)
    w, lam, log_m = state.w.copy(), state.lam.copy(), state.log_m.copy()
    log_lam = log_m[:, 0].copy()
    squares, radius = 0.0, DOG_START * (1.0 + np.linalg.norm(w))
    for t in range(1, steps + 1):
        rows = [rng.randint(o.n) for _ in range(cfg.k_f)]
        slopes = reference.loss_slope(o.kind, x[rows] @ w, o.labels[rows])
        direction = lam[0] * ((slopes[:, None] * x[rows]).mean(axis=0) + o.l2 * w)
        direction += a.T @ lam[1:1 + problem.m]
        values = np.concatenate([a @ w - b, form.constant])
        share = rates.features.shape[0] / cfg.k_r
        for _ in range(cfg.k_r):
            i = rng.randint(rates.features.shape[0])
            s = xr[i] @ w
            up, down = max(0.0, 1 + s), max(0.0, 1 - s)
            rising_up, rising_down = up > 0, down > 0
            if cfg.surrogate == games_kernels.SURROGATE_RAMP:
                rising_up, rising_down = rising_up and up < 1, rising_down and down < 1
                up, down = min(up, 1.0), min(down, 1.0)
            if formulation == games_kernels.LAGRANGIAN:
                values[problem.m:] += share * (plus[:, i] * up + minus[:, i] * down)
            else:
                values[problem.m:] += share * (plus[:, i] * (s > 0) + minus[:, i] * (s <= 0))
            slope = plus[:, i] * rising_up - minus[:, i] * rising_down
            direction += share * (lam[1 + problem.m:] @ slope) * xr[i]
        if cfg.step_rule in (STEP_DOG, STEP_ADAGRAD_NORM):
            squares += direction @ direction
            diameter = cfg.eta_w * radius if cfg.step_rule == STEP_DOG else cfg.eta_w
            eta = diameter / np.sqrt(squares) if squares > 0 else 0.0
        else:
            eta = cfg.eta_w / np.sqrt(t)
        w = np.clip(w - eta * direction, problem.lower, problem.upper)
        if cfg.step_rule == STEP_DOG:
            radius = max(radius, np.linalg.norm(w - state.origin))
        if formulation == games_kernels.LAGRANGIAN:
            lam[1:] += cfg.eta_lambda * values
            games_kernels.project_multipliers(lam, cfg.radius)
        elif formulation == games_kernels.PROXY_SWAP:
            games_kernels.swap_regret_update(log_m, lam, values, cfg.eta_lambda, cfg.log_floor)
        else:
            games_kernels.external_regret_update(
                log_lam, lam, values, cfg.eta_lambda, cfg.log_floor
            )
    return w, lam


@pytest.mark.parametrize("step_rule", [STEP_SCHEDULE, STEP_DOG, STEP_ADAGRAD_NORM],
                         ids=["schedule", "dog", "adagrad_norm"])
@pytest.mark.parametrize(
    "surrogate",
    [games_kernels.SURROGATE_HINGE, games_kernels.SURROGATE_RAMP],
    ids=["hinge", "ramp"],
)
@pytest.mark.parametrize(
    "formulation",
    [games_kernels.LAGRANGIAN, games_kernels.PROXY_SWAP, games_kernels.PROXY_EXTERNAL],
)
def test_game_steps_match_reference(formulation, surrogate, step_rule):
    problem = small_rate_problem()
    arrays = problem_arrays(problem, problem.m)
    rates = rate_arrays(problem.rates, problem.d, relaxed=formulation == games_kernels.LAGRANGIAN)
    cfg = games_kernels.GameConfig(formulation=formulation, eta_w=0.3, eta_lambda=0.5, radius=5.0,
                     log_floor=math.log(1e-3 / (problem.m_total + 1)), k_f=3, k_r=4,
                     surrogate=surrogate, step_rule=step_rule)
    state = initial_state(np.zeros(problem.d), problem.m_total, formulation, 9)
    games_kernels.game_steps(arrays, rates, cfg, state, 60)
    w, lam = reference_game(problem, cfg, 60, 9, formulation)
    np.testing.assert_allclose(state.w, w, rtol=0, atol=1e-10)
    np.testing.assert_allclose(state.lam, lam, rtol=0, atol=1e-10)


def test_rate_arrays_list_each_examples_entries():
    problem = small_rate_problem(1)
    rates = rate_arrays(problem.rates, problem.d, relaxed=False)
    n = problem.rates.features.shape[0]
    dense = np.zeros((2, n))
    for i in range(n):
        for e in range(rates.wt_indptr[i], rates.wt_indptr[i + 1]):
            dense[rates.wt_constraint[e], i] += rates.wt_weight[e] * rates.wt_sign[e]
    form = problem.rates.proxy
    np.testing.assert_allclose(dense, (form.plus - form.minus).toarray())
    assert sp.issparse(form.plus)


def test_a_probe_is_not_cut_short_by_its_first_steps_compiling():
    # On a cold kernel cache the first steps compile the kernels; under load that outlasted
    # the probe's share of the time and changed eta_w, and with it a fixed run's answer.
    calls: list[int] = []

    def advance(count: int) -> None:
        if not calls:
            time.sleep(0.3)                 # longer than the probe's share of 1 s
        calls.append(count)

    assert probe_steps(advance, 1000, time.perf_counter() + 1.0) == 1000
    assert calls[0] == UNTIMED_STEPS and sum(calls) == 1000
    calls.clear()
    assert probe_steps(advance, 1000, time.perf_counter() - 1.0) == 0   # the time is up
    assert calls == []
