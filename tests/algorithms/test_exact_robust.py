"""The exact methods on a robust objective (``max_of`` of a linear model): the epigraph
program's answer against CVXPY's min-max on small random problems, its certificate, and
``auto``'s choice on the boundary of the exact limit."""

from __future__ import annotations

import itertools
import time
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from worker import solve
from worker.algorithms.exact.exact_robust import robust_bound, run_exact_robust
from worker.algorithms.method_choice import EXACT_MAX_WORK, choose_robust, robust_work
from worker.algorithms.registry import chosen
from worker.losses import BY_CODE, LOSSES, TARGETS
from worker.problem.network import Network, NetworkProblem, Term

#: The losses with a conic form, which the epigraph program takes.
LOSS_NAMES = tuple(name for name, record in LOSSES.items() if record.has_conic_form)


def term_data(loss: str, n: int, d: int, rng: np.random.Generator, shift: float):
    """Features (n, d) with a bias column, and the loss's labels."""
    x = rng.normal(size=(n, d)) + shift
    x[:, -1] = 1.0
    scores = x @ rng.normal(size=d)
    y = scores + 0.3 * rng.normal(size=n) if LOSSES[loss].labels is TARGETS else \
        np.where(scores + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return x, y


def robust_problem(losses, seed: int, *, d: int = 5, n: int = 40, l1: float = 0.0,
                   l2: float = 0.0, box: float | None = 1.0) -> NetworkProblem:
    rng = np.random.default_rng(seed)
    terms = []
    for k, loss in enumerate(losses):
        x, y = term_data(loss, n + 7 * k, d, rng, 0.4 * k)
        terms.append(Term(sp.csr_matrix(x), y, LOSSES[loss].code, l1 * (k + 1), l2 * (k + 1)))
    side = np.inf if box is None else box
    return NetworkProblem(Network((d, 1), bias=False), terms, True, np.full(d, -side),
                          np.full(d, side))


def cvxpy_term(term: Term, w: cp.Variable):
    """The term's risk in CVXPY."""
    loss = BY_CODE[term.code].exact_reference(term.features.toarray() @ w, term.labels)
    return loss + term.l1 * cp.norm1(w) + term.l2 / 2 * cp.sum_squares(w)


def cvxpy_optimum(problem: NetworkProblem) -> float:
    w = cp.Variable(problem.d)
    values = [cvxpy_term(term, w) for term in problem.terms]
    finite = np.isfinite(problem.upper)
    rows = [w[finite] <= problem.upper[finite], w[finite] >= problem.lower[finite]] \
        if finite.any() else []
    program = cp.Problem(cp.Minimize(cp.maximum(*values)), rows)
    with warnings.catch_warnings():   # Clarabel's reduced tolerances are still within 1e-8
        warnings.simplefilter("ignore", UserWarning)
        program.solve(solver=cp.CLARABEL)
    assert program.status in ("optimal", "optimal_inaccurate")
    return float(program.value)


CASES = [(pair, l1, l2) for pair, (l1, l2) in itertools.product(
    [("logistic", "logistic", "logistic"), ("hinge", "hinge"), ("squared", "logistic"),
     ("squared_hinge", "hinge", "squared"), ("logistic", "hinge")],
    [(0.0, 0.0), (0.02, 0.0), (0.0, 0.1), (0.01, 0.05)])]


@pytest.mark.parametrize(("losses", "l1", "l2"), CASES,
                         ids=[f"{'+'.join(c[0])}-l1={c[1]}-l2={c[2]}" for c in CASES])
def test_the_epigraph_program_finds_cvxpys_min_max_and_certifies_it(losses, l1, l2):
    problem = robust_problem(losses, CASES.index((losses, l1, l2)), l1=l1, l2=l2)
    trajectory = run_exact_robust("exact_conic", problem, None, time.perf_counter() + 60)
    (w,) = trajectory.candidates.solutions
    optimum = cvxpy_optimum(problem)
    scale = 1.0 + abs(optimum)
    worst = float(problem.term_losses(w[None, :]).max())
    assert worst == pytest.approx(optimum, abs=1e-6 * scale)
    assert problem.box_violation(w) == 0.0
    certificate = trajectory.stats.method
    assert certificate["stopped_by"] in ("optimal", "almost_optimal")
    assert optimum - 1e-4 * scale <= certificate["lower_bound"] <= optimum + 1e-7 * scale


def test_without_a_box_the_l2_terms_keep_the_program_bounded():
    problem = robust_problem(("logistic", "squared"), 3, l2=0.05, box=None)
    trajectory = run_exact_robust("exact_conic", problem, None, time.perf_counter() + 60)
    (w,) = trajectory.candidates.solutions
    assert float(problem.term_losses(w[None, :]).max()) == pytest.approx(
        cvxpy_optimum(problem), rel=1e-6)


def test_the_bound_holds_for_any_weights_and_any_point():
    problem = robust_problem(("logistic", "hinge", "squared"), 11, l1=0.01, l2=0.02)
    optimum = cvxpy_optimum(problem)
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.uniform(-1, 1, problem.d)
        duals = {1: rng.uniform(0, 0.05, problem.terms[1].n)}
        assert robust_bound(problem, w, rng.uniform(0, 1, 3), duals) <= optimum + 1e-9
    assert robust_bound(problem, np.zeros(problem.d), np.zeros(3), {}) == -np.inf


def test_auto_solves_a_small_max_of_exactly_through_the_pipeline():
    rng = np.random.default_rng(5)
    terms = []
    for k in range(3):
        x, y = term_data("logistic", 60, 4, rng, 0.5 * k)
        terms.append({"type": "empirical_risk", "loss": "logistic",
                      "data": {"features": x.tolist(), "labels": y.tolist()}})
    spec = {"spec_version": 1, "dimension": 4, "bounds": {"lower": -5.0, "upper": 5.0},
            "objective": {"type": "max_of", "terms": terms}}
    result = solve(spec)
    (member,) = result.mixture
    assert result.algorithm == "exact_conic" and member.kind == "exact"
    assert "robust program" in result.stats["method_reason"]
    assert result.stats["stopped_by"] == "optimal"
    assert result.stats["certificate"] == "lagrangian_bound" and result.stats["gap"] <= 1e-6
    del spec["bounds"]    # no box, no l2: the bound is -inf where a slope is not exactly 0
    assert solve(spec).stats["certificate"] == "none"


def one_entry_terms(n: int, d: int, loss: str = "logistic") -> NetworkProblem:
    """Two terms of n rows with one nonzero each (work = 2 n (1 + cones) + d^2)."""
    rows = np.arange(n)
    x = sp.csr_matrix((np.ones(n), (rows, rows % d)), shape=(n, d))
    y = np.where(rows % 2 == 0, 1.0, -1.0)
    term = Term(x, y, LOSSES[loss].code)
    return NetworkProblem(Network((d, 1), bias=False), [term, term], True, np.full(d, -1.0),
                          np.full(d, 1.0))


@pytest.mark.parametrize(("loss", "method"), [("logistic", "exact_conic"),
                                              ("hinge", "exact_qp")])
def test_a_robust_program_at_the_work_limit_is_exact_and_one_example_more_is_not(loss, method):
    d = 10
    per_example = 1 + (25 if loss == "logistic" else 0)
    n = (EXACT_MAX_WORK - d * d) // (2 * per_example)
    at_limit = one_entry_terms(n, d, loss)
    assert robust_work(at_limit) <= EXACT_MAX_WORK
    assert chosen(at_limit, "auto").name == method
    beyond = one_entry_terms(n + 1, d, loss)
    assert robust_work(beyond) > EXACT_MAX_WORK
    assert choose_robust(beyond) is None and chosen(beyond, "auto").name == "lagrangian"


def test_robust_networks_and_named_games_keep_the_games():
    problem = one_entry_terms(50, 4)
    mlp = NetworkProblem(Network((4, 3, 1), bias=True), problem.terms, True,
                         np.full(19, -1.0), np.full(19, 1.0))
    assert chosen(mlp, "auto").name == "lagrangian"
    assert chosen(problem, "lagrangian").name == "lagrangian"
    single = NetworkProblem(problem.network, problem.terms[:1], False, problem.lower,
                            problem.upper)             # not robust: the box alone
    assert chosen(single, "auto").name == "lbfgsb"
