"""``auto``'s method choice on the boundaries of its rule (:mod:`worker.algorithms.method_choice`).

The problems are compiled directly (no solve): the rule reads only their kind and sizes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from tests.problems import random_problem
from worker.algorithms.method_choice import (
    CONE_WORK,
    EXACT_MAX_WORK,
    choose_method,
    exact_work,
)
from worker.algorithms.registry import chosen
from worker.errors import LossRefused
from worker.losses import BY_CODE, LOSSES
from worker.problem.compiled import LOSS_CODES, CompiledProblem, ConstraintSet, Objective
from worker.problem.lattice_rows import lattice_edges


def one_entry_rows(loss: str, n: int, d: int, m: int = 0, *, l2: float = 0.0,
                   box: float = 1.0) -> CompiledProblem:
    """n examples with one nonzero each, over d coordinates, under an ordering chain of m
    rows (m < d)."""
    rng = np.random.default_rng(0)
    features = sp.csr_matrix((rng.normal(size=n), (np.arange(n), np.arange(n) % d)),
                             shape=(n, d))
    labels = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    objective = Objective(LOSS_CODES[loss], features, labels, sp.csr_matrix((d, d)),
                          np.zeros(d), l2)
    pairs = np.column_stack([np.arange(m), np.arange(1, m + 1)])
    return CompiledProblem(objective, ConstraintSet.of_orderings(pairs, d),
                           np.full(d, -box), np.full(d, box))


def largest_exact_n(loss: str, d: int, m: int) -> int:
    """The most one-entry examples whose program is still within EXACT_MAX_WORK: each adds
    1 (and CONE_WORK for the logistic), each ordering row 2, the coordinates d^2."""
    return (EXACT_MAX_WORK - 2 * m - d**2) // (1 + (CONE_WORK if loss == "logistic" else 0))


def test_the_work_counts_nonzeros_the_coordinates_squared_and_the_cones():
    assert exact_work(one_entry_rows("hinge", 100, 30, 5)) == 100 + 5 * 2 + 30**2
    assert exact_work(one_entry_rows("squared", 100, 30, 5)) == 5 * 2 + 30**2
    assert exact_work(one_entry_rows("logistic", 100, 30, 5)) == \
        100 * (1 + CONE_WORK) + 5 * 2 + 30**2


@pytest.mark.parametrize(("loss", "exact"), [("hinge", "exact_qp"),
                                             ("squared_hinge", "exact_qp"),
                                             ("logistic", "exact_conic")])
def test_a_program_at_the_work_limit_is_exact_and_one_example_more_is_not(loss, exact):
    n = largest_exact_n(loss, d=40, m=20)
    at_limit, beyond = one_entry_rows(loss, n, 40, 20), one_entry_rows(loss, n + 1, 40, 20)
    assert exact_work(at_limit) <= EXACT_MAX_WORK < exact_work(beyond)
    assert choose_method(at_limit).name == exact
    assert choose_method(beyond).name == "lighttouch"               # m = 20 > 16
    assert "the LightTouch family" in choose_method(beyond).reason


def test_beyond_the_work_limit_few_constraints_go_to_fulltouch_or_epro():
    n = largest_exact_n("hinge", d=40, m=10) + 1
    assert choose_method(one_entry_rows("hinge", n, 40, 10)).name == "fulltouch"
    assert choose_method(one_entry_rows("hinge", n, 40, 10, l2=0.1)).name == "epro_sgd"


def test_the_coordinates_alone_decide_a_squared_loss():
    d = int(EXACT_MAX_WORK**0.5)                      # d^2 <= EXACT_MAX_WORK < (d + 1)^2
    with_row = one_entry_rows("squared", 100_000, d, 1)       # n does not count (Gram form)
    beyond = one_entry_rows("squared", 100, d + 1, 20)
    assert exact_work(with_row) <= EXACT_MAX_WORK < exact_work(beyond)
    assert choose_method(with_row).name == "exact_qp"
    assert choose_method(beyond).name == "lighttouch"


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_smooth_box_only_problems_go_to_lbfgsb_at_any_size(loss):
    huge = one_entry_rows(loss, 3 * EXACT_MAX_WORK, 100)
    assert exact_work(huge) > EXACT_MAX_WORK
    assert choose_method(huge).name == "lbfgsb"
    assert choose_method(random_problem("quadratic", "none")).name == "lbfgsb"


def test_one_constraint_or_a_hinge_takes_the_smooth_box_only_problem_elsewhere():
    assert choose_method(one_entry_rows("logistic", 100, 10, 1)).name == "exact_conic"
    assert choose_method(one_entry_rows("hinge", 100, 10)).name == "exact_qp"


def test_the_paper_lattice_goes_to_lighttouch():
    """d = 4,096, m = 24,576, n = 612,587 pairs (LightTouch paper §6): Clarabel needs
    800-1,000 s there, LightTouch reaches 1% in 4.5 s."""
    d, n = 4096, 612_587
    pairs = lattice_edges([2] * 12, list(range(12)), d, "constraints[0]")
    rng = np.random.default_rng(1)
    rows = np.repeat(np.arange(n), 2)
    features = sp.csr_matrix((np.tile([1.0, -1.0], n), (rows, rng.integers(0, d, 2 * n))),
                             shape=(n, d))
    objective = Objective(LOSS_CODES["hinge"], features, np.ones(n), sp.csr_matrix((d, d)),
                          np.zeros(d))
    problem = CompiledProblem(objective, ConstraintSet.of_orderings(pairs, d),
                              np.zeros(d), np.ones(d))
    assert problem.m == 24_576
    assert choose_method(problem).name == "lighttouch"


def test_the_reason_names_the_sizes_against_the_limits():
    reason = choose_method(random_problem("hinge", "linear")).reason
    assert reason.startswith("small program (") and f"{EXACT_MAX_WORK:,}" in reason
    assert "interior point" in reason


def test_a_loss_without_a_conic_form_never_gets_an_exact_method(monkeypatch):
    """A registered loss whose record has no conic form (as a new one may be added) goes to
    the LightTouch family however small the program, and the exact methods refuse it."""
    hinge = LOSSES["hinge"]
    monkeypatch.setitem(BY_CODE, hinge.code, replace(hinge, conic=None))
    problem = random_problem("hinge", "ordering", d=8)
    assert exact_work(problem) <= EXACT_MAX_WORK
    choice = chosen(problem, "auto")
    assert choice.name == "fulltouch" and "no conic form" in choice.reason
    with pytest.raises(LossRefused, match="exact_conic cannot take the hinge loss"):
        chosen(problem, "exact_conic")
