"""Full-batch L-BFGS-B on networks: ``auto``'s rule on its size boundary and where the games
stay, the solve's answer against the games', its determinism, and the error for a problem
it cannot solve."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from tests.networks.test_network_games import mlp_rate_spec
from worker import solve
from worker.algorithms.method_choice import NETWORK_MAX_WORK, network_work
from worker.algorithms.registry import chosen
from worker.errors import SpecError
from worker.losses import LOSSES
from worker.problem.network import Network, NetworkProblem, Term


def mlp_problem(n: int, *, sizes: tuple[int, ...] = (4, 3, 1), loss: str = "logistic",
                terms: int = 1, l2: float = 1e-4) -> NetworkProblem:
    """An MLP on n empty rows (the rule reads only the sizes and the penalty), in the box
    [-1, 1]."""
    network = Network(sizes, bias=True)
    term = Term(sp.csr_matrix((n, sizes[0])), np.ones(n), LOSSES[loss].code, l2=l2)
    box = np.ones(network.parameters)
    return NetworkProblem(network, [term] * terms, terms > 1, -box, box)


def test_a_small_mlp_with_only_the_box_goes_to_lbfgsb_and_one_example_more_does_not():
    sizes = (100, 100, 1)
    parameters = Network(sizes, bias=True).parameters
    n = NETWORK_MAX_WORK // parameters
    at_limit, beyond = mlp_problem(n, sizes=sizes), mlp_problem(n + 1, sizes=sizes)
    assert network_work(at_limit) == n * parameters <= NETWORK_MAX_WORK < network_work(beyond)
    choice = chosen(at_limit, "auto")
    assert choice.name == "lbfgsb" and f"{n * parameters:,}" in choice.reason
    assert chosen(beyond, "auto").name == "lagrangian"


@pytest.mark.parametrize(("problem", "method"), [
    (mlp_problem(50, loss="hinge"), "lagrangian"),                  # not differentiable
    (mlp_problem(50, terms=2), "lagrangian"),                       # a robust max_of
    (mlp_problem(50, loss="squared_hinge"), "lbfgsb"),
    (mlp_problem(50, l2=0.0), "lagrangian"),       # a hidden layer without a penalty
    (mlp_problem(50, sizes=(4, 3), l2=0.0), "lbfgsb"),   # linear scores: convex
])
def test_the_games_keep_what_lbfgsb_cannot_solve(problem, method):
    assert chosen(problem, "auto").name == method


def mlp_spec(**solver) -> dict:
    """A small MLP on a nonlinear boundary, no constraints, an l2 penalty."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(300, 3))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] ** 2 > 0.5, 1.0, -1.0)
    return {"model": {"type": "mlp", "hidden": [8], "init_seed": 2},
            "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 1e-4,
                          "data": {"features": x.tolist(), "labels": y.tolist()}},
            "solver": solver}


def test_auto_solves_a_small_mlp_by_lbfgsb_below_the_games_training_loss():
    quasi = solve(mlp_spec())
    games = solve(mlp_spec(algorithm="lagrangian", iterations=4000))
    assert quasi.algorithm == "lbfgsb" and quasi.stats["method"] == "lbfgsb"
    assert quasi.stats["stopped_by"] in ("optimal", "iteration_limit", "stalled")
    assert quasi.stats["certificate"] == "none" and quasi.stats["solver_iterations"] > 0
    assert len(quasi.mixture) == 1 and quasi.mixture[0].weight == pytest.approx(1.0)
    assert quasi.model.type == "mlp" and quasi.sizes.parameters == 3 * 8 + 8 + 8 + 1
    assert quasi.mean.objective <= games.mean.objective


def test_a_deadline_stops_it_with_its_last_point():
    result = solve(mlp_spec(algorithm="lbfgsb", time_limit_s=1e-9))
    assert result.stats["stopped_by"] == "time_limit" and len(result.mixture) == 1


def test_the_same_spec_gives_the_same_answer_and_another_init_seed_another():
    first, again = solve(mlp_spec()), solve(mlp_spec())
    assert first.mixture[0].solution == again.mixture[0].solution
    spec = mlp_spec()
    spec["model"]["init_seed"] = 3
    assert solve(spec).mixture[0].solution != first.mixture[0].solution


def test_naming_it_on_a_rate_constrained_network_is_refused_at_solver_algorithm():
    spec = mlp_rate_spec(iterations=100)
    spec["solver"]["algorithm"] = "lbfgsb"
    with pytest.raises(SpecError, match="solver.algorithm: lbfgsb .*rate constraints"):
        solve(spec)
