"""The compiled loop against the plain-numpy reference: same seed, same iterates."""

from __future__ import annotations

import numpy as np
import pytest

from tests import reference
from tests.problems import random_problem
from worker.algorithms.run.arrays import new_state, problem_arrays, run_config
from worker.kernels import distribution, layout
from worker.kernels.distribution import init_distribution, log_weight
from worker.kernels.iteration import run_iterations, running_average
from worker.kernels.objective import objective_value
from worker.losses import LOSSES as REGISTERED

#: Every registered loss and the quadratic objective.
LOSSES = [*REGISTERED, "quadratic"]
CONSTRAINTS = ["linear", "ordering", "lattice"]


def compiled_run(problem, *, mode, iterations, groups, minibatch, lazy, seed=3, l2_rate=True,
                 step_rule=layout.STEP_SCHEDULE):
    arrays = problem_arrays(problem, groups)
    cfg = run_config(arrays, mode=mode, gamma=2.0, eta_w=0.5, eta_p=0.25,
                     strong_convexity=problem.objective.l2, minibatch=minibatch, lazy=lazy,
                     step_rule=step_rule)
    state = new_state(arrays, np.clip(np.zeros(problem.d), problem.lower, problem.upper), seed)
    if mode == layout.MODE_LIGHT:
        init_distribution(arrays, cfg, state, state.w, 1)
    iterates = [state.w.copy()]
    for _ in range(iterations):
        run_iterations(arrays, cfg, state, 1)
        iterates.append(state.w.copy())
    return arrays, cfg, state, np.array(iterates)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("minibatch", [(2, 3, 2), None], ids=["fixed", "auto"])
def test_lighttouch_dense_matches_reference(loss, constraint, minibatch):
    problem = random_problem(loss, constraint, d=8, l2=0.1 if loss == "logistic" else 0.0)
    groups = problem.m if constraint != "lattice" else 4
    _, _, state, iterates = compiled_run(problem, mode=layout.MODE_LIGHT, iterations=150,
                                         groups=groups, minibatch=minibatch, lazy=False)
    expected = reference.run(problem, mode="light", iterations=150, gamma=2.0, eta_w=0.5,
                             eta_p=0.25, minibatch=minibatch, groups=groups, seed=3)
    np.testing.assert_allclose(iterates, expected["iterates"], rtol=0, atol=1e-10)
    assert state.counters[layout.CHECKS] == expected["checks"]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_fulltouch_matches_reference(loss, constraint):
    problem = random_problem(loss, constraint, d=8, l2=0.05 if loss == "squared" else 0.0)
    _, _, state, iterates = compiled_run(problem, mode=layout.MODE_FULL, iterations=120,
                                         groups=problem.m, minibatch=(2, 1, 1), lazy=False)
    expected = reference.run(problem, mode="full", iterations=120, gamma=2.0, eta_w=0.5,
                             eta_p=0.25, minibatch=(2, 1, 1), groups=problem.m, seed=3)
    np.testing.assert_allclose(iterates, expected["iterates"], rtol=0, atol=1e-10)
    assert state.counters[layout.CHECKS] == expected["checks"] == 120 * problem.m


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize(
    ("mode", "name"), [(layout.MODE_FULL, "full"), (layout.MODE_LIGHT, "light")]
)
@pytest.mark.parametrize("minibatch", [(2, 3, 2), None], ids=["fixed", "auto"])
@pytest.mark.parametrize(
    ("rule", "rule_name"), [(layout.STEP_DOG, "dog"), (layout.STEP_ADAGRAD, "adagrad")]
)
def test_warmup_steps_match_reference(loss, mode, name, minibatch, rule, rule_name):
    problem = random_problem(loss, "lattice", d=8, l2=0.1 if loss == "logistic" else 0.0)
    _, _, state, iterates = compiled_run(problem, mode=mode, iterations=150, groups=4,
                                         minibatch=minibatch, lazy=False, step_rule=rule)
    expected = reference.run(problem, mode=name, iterations=150, gamma=2.0, eta_w=0.5,
                             eta_p=0.25, minibatch=minibatch, groups=4, seed=3,
                             step_rule=rule_name)
    np.testing.assert_allclose(iterates, expected["iterates"], rtol=0, atol=1e-10)
    distance = np.linalg.norm(iterates - iterates[0], axis=1).max()
    assert state.scalars[layout.RADIUS] == pytest.approx(max(distance, 1e-6), rel=1e-9)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_lazy_distribution_equals_dense_update(constraint):
    """The lazy p is exactly the dense p-update replayed on the same samples."""
    problem = random_problem("hinge", constraint, d=16, seed=5, bound=2.0)
    arrays = problem_arrays(problem, problem.m)
    cfg = run_config(arrays, mode=layout.MODE_LIGHT, gamma=2.0, eta_w=1.0, eta_p=0.5,
                     strong_convexity=0.0, minibatch=(2, 2, 3), lazy=True)
    state = new_state(arrays, np.zeros(problem.d), 11)
    init_distribution(arrays, cfg, state, state.w, 1)
    u = np.zeros(problem.m)
    mu = state.mu.copy()
    for _ in range(300):
        t = int(state.counters[layout.ITERATION])
        lazy_u = np.array([log_weight(cfg, state, j, t) for j in range(problem.m)])
        np.testing.assert_allclose(np.exp(lazy_u - lazy_u.max()), np.exp(u - u.max()),
                                   rtol=1e-9, atol=1e-12)
        run_iterations(arrays, cfg, state, 1)
        subset = state.sampled[:3].copy()
        viol = state.sampled_viol[:3].copy()
        u += cfg.eta_p * cfg.gamma * mu
        u[subset] += cfg.eta_p * cfg.gamma * problem.m / 3 * (viol - mu[subset])
        mu[subset] = viol
        np.testing.assert_array_equal(mu, state.mu)


def test_running_average_is_mean_of_iterates():
    problem = random_problem("hinge", "ordering", d=8)
    _, _, state, iterates = compiled_run(problem, mode=layout.MODE_LIGHT, iterations=200,
                                         groups=problem.m, minibatch=None, lazy=True)
    average = np.empty(problem.d)
    running_average(state, average)
    np.testing.assert_allclose(average, iterates[:-1].mean(axis=0), atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_objective_value_matches_reference(loss):
    problem = random_problem(loss, "linear", d=6, l2=0.3)
    arrays = problem_arrays(problem, 1)
    w = np.random.default_rng(1).normal(size=6)
    assert objective_value(arrays, w) == pytest.approx(reference.objective(problem, w), rel=1e-12)


def test_dense_weights_follow_the_log_weights_over_many_iterations():
    """The dense p keeps exp(u - shift) by multiplication; it stays the softmax of u."""
    problem = random_problem("hinge", "lattice", d=8)
    arrays, cfg, state, _ = compiled_run(problem, mode=layout.MODE_LIGHT, iterations=0,
                                         groups=5, minibatch=(2, 2, 1), lazy=False)
    run_iterations(arrays, cfg, state, 3 * distribution.SYNC_EVERY + 17)
    softmax = np.exp(state.log_w - state.log_w.max())
    np.testing.assert_allclose(state.p_weight / state.p_weight.sum(), softmax / softmax.sum(),
                               rtol=1e-9)
