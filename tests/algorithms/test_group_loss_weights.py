"""Weighted group losses: the group's mean loss weighted by the objective's weights (or by the
constraint's own ``data.weights``), solved exactly and by the games, against CVXPY's
(Clarabel's) weighted optimum on small random problems, and integer weights against the same
rows repeated."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from tests.algorithms.test_group_loss import BOX, problem_data, spec
from worker import solve

#: Each loss's per-example value in CVXPY.
PER_EXAMPLE = {
    "logistic": lambda s, y: cp.logistic(-cp.multiply(y, s)),
    "hinge": lambda s, y: cp.pos(1 - cp.multiply(y, s)),
    "squared": lambda s, y: 0.5 * cp.square(s - y),
}


def weighted_mean(loss: str, x, y, c, w):
    """sum_i c_i loss_i / sum_i c_i in CVXPY, for scores x @ w."""
    return cp.sum(cp.multiply(c / c.sum(), PER_EXAMPLE[loss](x @ w, y)))


def cvxpy_weighted(x, y, c, group, loss: str, rhs: float | None, group_c=None,
                   minimize_group: bool = False) -> tuple[float, float]:
    """(optimum, the group's weighted mean loss there) of the weighted mean loss over the box,
    the group's mean loss weighted by ``group_c`` (default ``c``) <= rhs (None: free)."""
    w = cp.Variable(x.shape[1])
    rows = group == 1
    group_c = c if group_c is None else group_c
    objective = weighted_mean(loss, x, y, c, w)
    group_value = weighted_mean(loss, x[rows], y[rows], group_c[rows], w)
    constraints = [w <= BOX, w >= -BOX] + ([] if rhs is None else [group_value <= rhs])
    program = cp.Problem(cp.Minimize(group_value if minimize_group else objective), constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        program.solve(solver=cp.CLARABEL)
    assert program.status == "optimal"
    return float(objective.value), float(group_value.value)


def binding(x, y, c, group, loss, group_c=None) -> float:
    """A bound halfway between the group's least weighted mean loss and its value at the
    weighted unconstrained optimum."""
    _, free = cvxpy_weighted(x, y, c, group, loss, None, group_c)
    least = cvxpy_weighted(x, y, c, group, loss, None, group_c, minimize_group=True)[1]
    assert free - least > 0.02, "the constraint would not bind"
    return least + 0.5 * (free - least)


def fractional(n: int, seed: int) -> np.ndarray:
    """Weights uniform on [0, 3) with a few zeros."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.0, 3.0, n)
    c[rng.choice(n, 4, replace=False)] = 0.0
    return c


@pytest.mark.parametrize(("loss", "seed"), [("logistic", 0), ("hinge", 1), ("squared", 2)])
def test_auto_weighs_the_groups_rows_as_cvxpy_does(loss, seed):
    x, y, group = problem_data(seed, loss)
    c = fractional(x.shape[0], seed)
    rhs = binding(x, y, c, group, loss)
    optimum, group_value = cvxpy_weighted(x, y, c, group, loss, rhs)
    assert group_value == pytest.approx(rhs, abs=1e-6)              # it binds
    s = spec(x, y, group, loss, loss, rhs, "auto")
    s["objective"]["data"]["weights"] = c.tolist()
    result = solve(s)
    assert result.stats["method"] in ("exact_qp", "exact_conic")
    assert result.expected.objective == pytest.approx(optimum, rel=1e-5, abs=1e-6)
    assert result.feasibility.feasible
    row = result.report.training.models["mixture"].constraints[0]
    assert row.lhs == pytest.approx(group_value, abs=1e-5)          # weighted in the report


def test_a_constraints_own_weights_weigh_its_group():
    x, y, group = problem_data(3, "logistic")
    c = np.ones(x.shape[0])
    own = fractional(x.shape[0], 9)
    rhs = binding(x, y, c, group, "logistic", own)
    optimum, group_value = cvxpy_weighted(x, y, c, group, "logistic", rhs, own)
    s = spec(x, y, group, "logistic", "logistic", rhs, "auto")
    s["constraints"][0]["data"] = {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": {"g": group.tolist()}, "weights": own.tolist()}
    result = solve(s)
    assert result.expected.objective == pytest.approx(optimum, rel=1e-5, abs=1e-6)
    row = result.report.training.models["mixture"].constraints[0]
    assert row.lhs == pytest.approx(group_value, abs=1e-5)


def test_integer_weights_equal_repeated_rows():
    x, y, group = problem_data(4, "hinge")
    counts = np.random.default_rng(4).integers(0, 4, x.shape[0])
    counts[np.flatnonzero(group == 1)[0]] = 2                 # the group keeps a member
    rhs = binding(x, y, counts.astype(float), group, "hinge")
    s = spec(x, y, group, "hinge", "hinge", rhs, "auto")
    s["objective"]["data"]["weights"] = counts.astype(float).tolist()
    rows = np.repeat(np.arange(x.shape[0]), counts)
    repeated = solve(spec(x[rows], y[rows], group[rows], "hinge", "hinge", rhs, "auto"))
    result = solve(s)
    assert result.expected.objective == pytest.approx(repeated.expected.objective, rel=1e-6)
    assert result.report.training.models["mixture"].constraints[0].lhs == pytest.approx(
        repeated.report.training.models["mixture"].constraints[0].lhs, abs=1e-6)


@pytest.mark.parametrize("algorithm", ["lagrangian", "proxy_lagrangian"])
def test_the_games_draw_the_groups_rows_by_weight(algorithm):
    x, y, group = problem_data(0, "logistic")
    c = fractional(x.shape[0], 5)
    rhs = binding(x, y, c, group, "logistic")
    optimum, _ = cvxpy_weighted(x, y, c, group, "logistic", rhs)
    s = spec(x, y, group, "logistic", "logistic", rhs, algorithm, iterations=65536)
    s["objective"]["data"]["weights"] = c.tolist()
    result = solve(s)
    tolerance = result.feasibility.tolerance
    assert result.feasibility.feasible
    assert result.expected.objective == pytest.approx(optimum, rel=tolerance)
    assert result.report.training.models["mixture"].constraints[0].lhs <= rhs + tolerance
