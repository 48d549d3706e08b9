"""Example weights on networks, K scores and robust objectives: the games, L-BFGS-B and the
exact epigraph program against CVXPY's weighted optima, and an MLP's weights against
repeated rows."""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
import pytest

from tests.algorithms.test_exact_robust import cvxpy_term, robust_problem
from tests.networks.test_network_games import logistic_term, risk
from worker.algorithms.exact.exact_robust import run_exact_robust
from worker.errors import SpecError
from worker.losses import BY_CODE
from worker.pipeline.solve import solve
from worker.problem.network import NetworkProblem, Term
from worker.problem.weights import mean_one


def weigh(problem: NetworkProblem, seed: int) -> NetworkProblem:
    """``problem`` with weights in [0, 3) on every term's examples, a few of them 0."""
    rng = np.random.default_rng(seed)
    terms = []
    for term in problem.terms:
        c = rng.uniform(0.0, 3.0, term.n)
        c[rng.choice(term.n, 3, replace=False)] = 0.0
        terms.append(Term(term.features, term.labels, term.code, term.l1, term.l2, mean_one(c)))
    return NetworkProblem(problem.network, terms, True, problem.lower, problem.upper)


def weighted_cvxpy_term(term: Term, w: cp.Variable):
    """The term's weighted risk in CVXPY, one reference per example."""
    x, reference = term.features.toarray(), BY_CODE[term.code].exact_reference
    loss = sum(c * reference(x[i:i + 1] @ w, term.labels[i:i + 1])
               for i, c in enumerate(term.weights) if c > 0) / term.n
    return loss + term.l1 * cp.norm1(w) + term.l2 / 2 * cp.sum_squares(w)


@pytest.mark.parametrize("losses", [("logistic", "hinge"), ("squared_hinge", "squared")])
def test_the_epigraph_program_weighs_every_term(losses):
    problem = weigh(robust_problem(losses, 4, l2=0.05), 1)
    trajectory = run_exact_robust("exact_conic", problem, None, time.perf_counter() + 60)
    (w,) = trajectory.candidates.solutions
    v = cp.Variable(problem.d)
    program = cp.Problem(cp.Minimize(cp.maximum(*[weighted_cvxpy_term(t, v)
                                                  for t in problem.terms])),
                         [v <= problem.upper, v >= problem.lower])
    optimum = program.solve(solver=cp.CLARABEL)
    unweighted = cp.Problem(cp.Minimize(cp.maximum(*[cvxpy_term(t, v)
                                                     for t in problem.terms])),
                            [v <= problem.upper, v >= problem.lower]).solve(solver=cp.CLARABEL)
    assert float(problem.term_losses(w[None, :]).max()) == pytest.approx(optimum, rel=1e-6)
    assert abs(unweighted - optimum) > 1e-3
    bound = trajectory.stats.method["lower_bound"]
    assert optimum - 1e-4 <= bound <= optimum + 1e-7


@pytest.mark.parametrize("algorithm", ["lagrangian", "proxy_lagrangian"])
def test_the_robust_games_draw_examples_by_weight(algorithm):
    rng = np.random.default_rng(0)
    terms = [logistic_term(rng, 2.0), logistic_term(rng, -2.0)]
    weights = [rng.uniform(0.0, 3.0, y.size) for _, y in terms]
    w, t = cp.Variable(5), cp.Variable()
    cp.Problem(cp.Minimize(t), [c @ cp.logistic(-cp.multiply(y, x @ w)) / c.sum() <= t
                                for (x, y), c in zip(terms, weights, strict=True)]
               ).solve(solver=cp.CLARABEL)
    specs = [risk(x, y) for x, y in terms]
    for spec, c in zip(specs, weights, strict=True):
        spec["data"]["weights"] = c.tolist()
    result = solve({"objective": {"type": "max_of", "terms": specs},
                    "solver": {"algorithm": algorithm, "iterations": 5000}})
    assert t.value - 1e-6 <= result.expected.objective <= t.value * 1.005


def softmax_data(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(120, 4))
    labels = (x @ rng.normal(size=(4, 3)) + rng.normal(size=(120, 3))).argmax(axis=1)
    return x, labels, rng.uniform(0.0, 2.0, 120)


@pytest.mark.parametrize("algorithm", ["lbfgsb", "lagrangian"])
def test_a_weighted_softmax_reaches_cvxpys_weighted_optimum(algorithm):
    x, labels, c = softmax_data(3)
    l2 = 0.05
    weights = cp.Variable((4, 3))
    scores = x @ weights
    loss = (c @ cp.log_sum_exp(scores, axis=1)
            - cp.sum(cp.multiply((c[:, None] * np.eye(3)[labels]), scores))) / c.sum() \
        + l2 / 2 * cp.sum_squares(weights)
    exact = cp.Problem(cp.Minimize(loss)).solve(solver=cp.CLARABEL)
    objective = risk(x, labels, "softmax_cross_entropy", l2=l2)
    objective["data"]["weights"] = c.tolist()
    result = solve({"objective": objective,
                    "solver": {"algorithm": algorithm, "iterations": 5000}})
    assert exact - 1e-6 <= result.expected.objective <= exact * (1.0 + 1e-6
                                                                 if algorithm == "lbfgsb"
                                                                 else 1.01)


def test_an_mlps_integer_weights_are_repeated_rows():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, 3))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] ** 2 > 0.5, 1.0, -1.0)
    counts = rng.integers(0, 3, 60)
    model = {"type": "mlp", "hidden": [4], "init_seed": 1}
    weighted = risk(x, y, l2=0.01)
    weighted["data"]["weights"] = counts.astype(float).tolist()
    repeated = risk(np.repeat(x, counts, axis=0), np.repeat(y, counts), l2=0.01)
    solver = {"algorithm": "lbfgsb"}
    first = solve({"model": model, "objective": weighted, "solver": solver})
    second = solve({"model": model, "objective": repeated, "solver": solver})
    assert first.expected.objective == pytest.approx(second.expected.objective, rel=1e-5)
    assert first.report.objective.weighted and not second.report.objective.weighted


def test_weights_of_a_term_are_checked_at_its_path():
    rng = np.random.default_rng(0)
    terms = [risk(*logistic_term(rng, 1.0, n=30)), risk(*logistic_term(rng, -1.0, n=30))]
    terms[1]["data"]["weights"] = [1.0] * 29 + [-1.0]
    with pytest.raises(SpecError, match=r"^objective\.terms\[1\]\.data\.weights\[29\]: "):
        solve({"objective": {"type": "max_of", "terms": terms}})
