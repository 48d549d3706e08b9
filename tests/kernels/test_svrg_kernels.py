"""SVRG OL kernels against the plain-numpy reference: same seed, same iterates and sums."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests import svrg_reference
from tests.problems import random_problem
from worker.algorithms.bounds.smooth_part import loss_value_and_gradient
from worker.algorithms.run.arrays import new_state, problem_arrays, run_config
from worker.distributed.batch import InProcessBatch, combine, partial_sum, rows_of, tree_reduce
from worker.distributed.options import SvrgOptions
from worker.kernels.layout import GRADIENT_SAMPLES, MODE_PLAIN
from worker.kernels.online import LEARNER_CODES, learner_step, new_slots
from worker.kernels.svrg import SerialRun, batch_key, serial_steps


@pytest.mark.parametrize("learner", ["adagrad", "freerex"])
@pytest.mark.parametrize("box", [1.0, np.inf], ids=["box", "unbounded"])
def test_learners_match_reference(learner, box):
    rng = np.random.default_rng(4)
    d = 6
    lower, upper = np.full(d, -box), np.full(d, box)
    code = LEARNER_CODES[learner]
    slots = new_slots(code, d)
    model = svrg_reference.AdaGrad(d, 0.7) if learner == "adagrad" else svrg_reference.FreeRex(d)
    w = np.zeros(d)
    expected = w.copy()
    for _ in range(300):
        g = rng.normal(size=d) * (rng.uniform(size=d) < 0.6) + 0.3
        w = np.array([learner_step(code, slots, 0.7, j, w[j], g[j], lower[j], upper[j])
                      for j in range(d)])
        expected = model.step(expected, g, lower, upper)
        np.testing.assert_allclose(w, expected, rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(w) <= box)


def thinned(problem, seed: int):
    """``problem`` with column j's nonzeros kept with probability (j + 1) / d, so the columns'
    inverse frequencies (§8.1) spread from about 1 to about d."""
    features = problem.objective.features.tocoo()
    keep = np.random.default_rng(seed).uniform(size=features.nnz) < (features.col + 1) / problem.d
    features.data[~keep] = 0.0
    features = features.tocsr()
    features.eliminate_zeros()
    return dataclasses.replace(problem, objective=dataclasses.replace(problem.objective,
                                                                      features=features))


#: (sparse, batch examples as a fraction of n): the §8.1 term on no column, some, or all.
STEPS = [(True, 0.0), (True, 0.25), (True, 1.0), (False, 1.0)]


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
@pytest.mark.parametrize("learner", ["adagrad", "freerex"])
@pytest.mark.parametrize(("sparse", "batch"), STEPS,
                         ids=["sparse-empty-batch", "sparse-small-batch", "sparse-full-batch",
                              "dense"])
def test_serial_phase_matches_reference(loss, learner, sparse, batch):
    problem = thinned(random_problem(loss, "none", d=8, n=50, l2=0.0 if sparse else 0.2,
                                     seed=2), 3)
    batch_examples = int(batch * problem.n)
    covered = svrg_reference.inverse_frequency(problem) <= batch_examples
    assert covered.all() == (batch == 1.0) and covered.any() == (batch > 0.0)
    arrays = problem_arrays(problem, 0)
    cfg = run_config(arrays, mode=MODE_PLAIN, gamma=1.0, eta_w=0.5, eta_p=0.1,
                     strong_convexity=problem.objective.l2, minibatch=(2, 0, 0), lazy=True)
    anchor = np.random.default_rng(1).uniform(-0.5, 0.5, size=problem.d)
    gradient = svrg_reference.batch_gradient(problem, anchor, 0, 1.0)[0]
    frequency = InProcessBatch(problem, SvrgOptions(), seed=0).inverse_frequency
    np.testing.assert_array_equal(frequency, svrg_reference.inverse_frequency(problem))
    code = LEARNER_CODES[learner]
    run = SerialRun(cfg, code, 0.5, new_slots(code, problem.d), sparse, anchor, gradient,
                    frequency, batch_examples)
    state = new_state(arrays, np.zeros(problem.d), seed=9)
    iterates = [state.w.copy()]
    for _ in range(200):
        serial_steps(arrays, run, state, 1)
        iterates.append(state.w.copy())
    expected = svrg_reference.serial_run(problem, learner=learner, eta=0.5, sparse=sparse,
                                         anchor=anchor, anchor_gradient=gradient,
                                         batch_examples=batch_examples, k_f=2, steps=200,
                                         seed=9)
    np.testing.assert_allclose(np.array(iterates), expected, rtol=0, atol=1e-10)
    assert state.counters[GRADIENT_SAMPLES] == 400


@pytest.mark.parametrize("batch_examples", [0, 5, 12, 40])
def test_sparse_estimate_is_unbiased(batch_examples):
    """§8.1 with the control variate on the columns the batch sees: given the exact
    grad F(v), the mean over the n examples of the estimate at w is exactly grad F(w),
    whichever columns carry the control variate."""
    problem = thinned(random_problem("logistic", "none", d=8, n=40, seed=5), 1)
    rng = np.random.default_rng(0)
    w, anchor = rng.uniform(-1, 1, size=problem.d), rng.uniform(-1, 1, size=problem.d)
    exact = svrg_reference.batch_gradient(problem, anchor, 0, 1.0)[0]
    mean = np.mean([svrg_reference.estimate(problem, i, w, sparse=True, anchor=anchor,
                                            anchor_gradient=exact,
                                            batch_examples=batch_examples)
                    for i in range(problem.n)], axis=0)
    np.testing.assert_allclose(mean, svrg_reference.batch_gradient(problem, w, 0, 1.0)[0],
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fraction", [1.0, 0.3])
def test_batch_gradient_matches_reference(fraction):
    problem = random_problem("logistic", "none", d=8, n=300, seed=3)
    anchor = np.random.default_rng(0).normal(size=problem.d)
    batch = InProcessBatch(problem, SvrgOptions(partition_rows=64), seed=11)
    result = batch.gradient(anchor, 2, int(fraction * problem.n))
    expected, count = svrg_reference.batch_gradient(problem, anchor, int(batch_key(11, 2)),
                                                    fraction)
    assert result.examples == count and (fraction == 1.0) == (count == problem.n)
    np.testing.assert_allclose(result.mean, expected, rtol=1e-12, atol=1e-14)
    assert result.exact == (fraction == 1.0)
    if result.exact:       # a batch of every row also gives the exact mean loss L(anchor)
        loss, _ = loss_value_and_gradient(problem.objective, anchor)
        assert result.loss == pytest.approx(loss, rel=1e-12)


def test_batch_does_not_depend_on_partitioning():
    problem = random_problem("hinge", "none", d=8, n=500, seed=6)
    anchor = np.random.default_rng(2).normal(size=problem.d)
    results = [InProcessBatch(problem, SvrgOptions(partition_rows=rows), seed=1)
               .gradient(anchor, 0, 200) for rows in (7, 64, 500)]
    assert len({r.examples for r in results}) == 1
    for result in results[1:]:
        np.testing.assert_allclose(result.mean, results[0].mean, rtol=1e-12, atol=1e-14)


def test_tree_reduce_pairs_in_a_fixed_order():
    assert tree_reduce(list("abcde"), lambda x, y: f"({x}{y})") == "(((ab)(cd))e)"
    problem = random_problem("squared", "none", d=4, n=30, seed=0)
    parts = [rows_of(problem.objective, a, b) for a, b in ((0, 10), (10, 20), (20, 30))]
    total, count, losses = tree_reduce([partial_sum(p, np.ones(4), batch_key(0, 0), 1.0)
                                        for p in parts], combine)
    x = problem.objective.features.toarray()
    residuals = x @ np.ones(4) - problem.objective.labels
    np.testing.assert_allclose(total, residuals @ x)
    np.testing.assert_allclose(losses, 0.5 * residuals @ residuals)
    assert count == 30
