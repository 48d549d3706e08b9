"""Group-loss constraints on a linear model: the exact epigraph program and the games against
CVXPY's constrained optimum on small random problems, and ``auto``'s choice and reason."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from worker import solve
from worker.losses import LOSSES, TARGETS

BOX = 4.0


def problem_data(seed: int, loss: str, n: int = 160, d: int = 4):
    """Features (n, d) with a bias column, labels for ``loss``, and a group (n,) 0/1 whose
    rows the unconstrained fit serves worse than the others."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[:, -1] = 1.0
    group = (rng.random(n) < 0.3).astype(float)
    x[group == 1, 0] += 1.0
    truth = rng.normal(size=d) + np.where(np.arange(d) == 1, 1.5, 0.0)
    scores = x @ truth + 1.5 * group * x[:, 1]
    y = scores + 0.5 * rng.normal(size=n) if LOSSES[loss].labels is TARGETS else \
        np.where(scores + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    return x, y, group


def cvxpy_solve(x, y, group, objective_loss: str, group_loss: str, rhs: float | None,
                minimize_group: bool = False) -> tuple[float, float]:
    """(optimum, the group's mean loss there) of the objective's mean loss over the box, with
    the group's mean loss <= rhs (None: unconstrained); ``minimize_group``: the least
    group loss instead."""
    w = cp.Variable(x.shape[1])
    rows = group == 1
    objective = LOSSES[objective_loss].exact_reference(x @ w, y)
    group_value = LOSSES[group_loss].exact_reference(x[rows] @ w, y[rows])
    constraints = [w <= BOX, w >= -BOX] + ([] if rhs is None else [group_value <= rhs])
    program = cp.Problem(cp.Minimize(group_value if minimize_group else objective),
                         constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        program.solve(solver=cp.CLARABEL)
    assert program.status == "optimal"
    return float(objective.value), float(group_value.value)


def spec(x, y, group, objective_loss, group_loss, rhs, algorithm, **solver):
    return {"objective": {"type": "empirical_risk", "loss": objective_loss,
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "groups": {"g": group.tolist()}}},
            "bounds": {"lower": -BOX, "upper": BOX},
            "constraints": [{"type": "group_loss", "group": "g", "loss": group_loss,
                             "rhs": rhs}],
            "solver": {"algorithm": algorithm, "seed": 3, **solver},
            "output": {"mixture": True}}


def binding_bound(x, y, group, objective_loss, group_loss) -> float:
    """A bound halfway between the group's least mean loss and its loss at the
    unconstrained optimum: feasible, and binding."""
    _, free = cvxpy_solve(x, y, group, objective_loss, group_loss, None)
    least = cvxpy_solve(x, y, group, objective_loss, group_loss, None, minimize_group=True)[1]
    assert free - least > 0.02, "the constraint would not bind"
    return least + 0.5 * (free - least)


CASES = [("logistic", "logistic", 0), ("hinge", "hinge", 1), ("squared", "squared", 2),
         ("logistic", "hinge", 3), ("squared_hinge", "logistic", 4)]


@pytest.mark.parametrize(("objective_loss", "group_loss", "seed"), CASES)
def test_auto_solves_a_small_group_loss_problem_exactly(objective_loss, group_loss, seed):
    x, y, group = problem_data(seed, objective_loss)
    rhs = binding_bound(x, y, group, objective_loss, group_loss)
    optimum, group_value = cvxpy_solve(x, y, group, objective_loss, group_loss, rhs)
    assert group_value == pytest.approx(rhs, abs=1e-6)          # it binds
    result = solve(spec(x, y, group, objective_loss, group_loss, rhs, "auto"))
    assert result.stats["method"] in ("exact_qp", "exact_conic")
    assert "group-loss program" in result.stats["method_reason"]
    assert result.expected.objective == pytest.approx(optimum, rel=1e-5, abs=1e-6)
    assert result.expected.max_violation <= 1e-6
    assert result.feasibility.feasible
    scale = 1.0 + abs(optimum)       # a certified bound, tight to the duals' accuracy
    assert optimum - 1e-3 * scale <= result.stats["lower_bound"] <= optimum + 1e-7 * scale


@pytest.mark.parametrize("algorithm", ["lagrangian", "proxy_lagrangian"])
@pytest.mark.parametrize(("objective_loss", "group_loss", "seed"), CASES[:4])
def test_the_games_mixture_is_near_the_constrained_optimum_and_feasible(
        objective_loss, group_loss, seed, algorithm):
    x, y, group = problem_data(seed, objective_loss)
    rhs = binding_bound(x, y, group, objective_loss, group_loss)
    optimum, _ = cvxpy_solve(x, y, group, objective_loss, group_loss, rhs)
    result = solve(spec(x, y, group, objective_loss, group_loss, rhs, algorithm,
                        iterations=65536))
    tolerance = result.feasibility.tolerance
    assert result.feasibility.feasible
    assert result.expected.max_violation <= tolerance
    # the mixture's expected objective within the tolerance (relative) of the optimum
    assert result.expected.objective == pytest.approx(optimum, rel=tolerance)
    assert len(result.mixture) <= 2                              # m + 1 members
    group_losses = result.report.training.models["mixture"].constraints[0]
    assert group_losses.lhs <= rhs + tolerance


def test_a_game_stopped_by_its_rule_is_feasible_and_says_converged():
    x, y, group = problem_data(0, "logistic")
    rhs = binding_bound(x, y, group, "logistic", "logistic")
    optimum, _ = cvxpy_solve(x, y, group, "logistic", "logistic", rhs)
    result = solve(spec(x, y, group, "logistic", "logistic", rhs, "lagrangian"))
    assert result.stats["stopped_by"] == "converged"
    assert result.feasibility.feasible
    assert result.expected.objective == pytest.approx(optimum, rel=1e-2)


def test_the_same_spec_and_seed_give_the_same_game():
    x, y, group = problem_data(0, "logistic")
    rhs = binding_bound(x, y, group, "logistic", "logistic")
    first = solve(spec(x, y, group, "logistic", "logistic", rhs, "lagrangian"))
    again = solve(spec(x, y, group, "logistic", "logistic", rhs, "lagrangian"))
    assert first.mean.solution == again.mean.solution


def test_auto_plays_the_games_beside_rate_constraints_and_says_why():
    x, y, group = problem_data(0, "logistic")
    rhs = binding_bound(x, y, group, "logistic", "logistic")
    with_rate = spec(x, y, group, "logistic", "logistic", rhs, "auto", iterations=2048)
    with_rate["constraints"].append({"type": "rate", "lhs": {"metric":
                                                             "positive_prediction_rate"},
                                     "op": ">=", "rhs": 0.1})
    result = solve(with_rate)
    assert result.stats["method"] == "proxy_lagrangian"
    assert "group losses beside rate constraints" in result.stats["method_reason"]
    assert result.sizes.constraints == 2
