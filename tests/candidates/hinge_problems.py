"""Hinge-loss problems shared by the polish's and the lower bound's tests: the exact optimum
by CVXPY/Clarabel, random problems on an order with it, and a small spec on files."""

from __future__ import annotations

from pathlib import Path

import cvxpy as cp
import numpy as np
from hypothesis import strategies as st

from tests.problems import random_problem


def exact(problem) -> tuple[float, np.ndarray]:
    """min mean hinge over the box and A w <= b, by Clarabel: (value, w)."""
    objective, constraints = problem.objective, problem.constraints
    x = objective.features.toarray() * objective.labels[:, None]
    w = cp.Variable(problem.d)
    rows = [w >= problem.lower, w <= problem.upper]
    if constraints.m:
        rows.append(constraints.matrix.toarray() @ w <= constraints.rhs)
    value = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - x @ w)) / x.shape[0]), rows).solve(
        solver=cp.CLARABEL)
    return value, w.value


def _on_an_order(constraint: str, seed: int, spread: float, box: float):
    problem = random_problem("hinge", constraint, d=8, n=40, seed=seed, bound=box)
    reference = np.random.default_rng(seed).normal(scale=spread, size=problem.d)
    return problem, exact(problem)[0], reference


def on_an_order() -> st.SearchStrategy:
    """(problem, its exact optimum, a random point (d,)): hinge problems of 40 examples on
    an ordering or a lattice of 8 coordinates, boxes 0.1 to 10, points of scale 0 to 3."""
    return st.builds(_on_an_order, st.sampled_from(["ordering", "lattice"]),
                     st.integers(0, 10**6), st.floats(0.0, 3.0), st.floats(0.1, 10.0))


def hinge_spec(directory: Path, iterations: int) -> dict:
    """A hinge-loss spec on 300 random examples (6 features, written to ``directory``), box
    [-1, 1], one ordering chain, LightTouch for ``iterations``."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6))
    y = np.where(x @ rng.normal(size=6) + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    np.save(directory / "x.npy", x)
    np.save(directory / "y.npy", y)
    return {"bounds": {"lower": -1, "upper": 1},
            "objective": {"type": "empirical_risk", "loss": "hinge",
                          "data": {"features": {"uri": (directory / "x.npy").as_uri()},
                                   "labels": {"uri": (directory / "y.npy").as_uri()}}},
            "constraints": [{"type": "ordering", "chain": [0, 1, 2, 3]}],
            "solver": {"algorithm": "lighttouch", "iterations": iterations}}
