"""Every problem of the exact-comparison suite (:mod:`tests.specs`) solved with no ``solver``
block at all: within 1% of CVXPY (Clarabel), feasible, and not stopped by the time limit."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest

from tests.specs import CONSTRAINT_KINDS, LOSSES, exact_optimum, random_spec
from worker import solve

CASES = [(loss, kind, l1, l2) for loss, kind in itertools.product(LOSSES,
                                                                  (*CONSTRAINT_KINDS, "none"))
         for l1, l2 in ((0.0, 0.0), (0.05, 0.2))]


@pytest.mark.parametrize(("loss", "constraints", "l1", "l2"), CASES,
                         ids=[f"{c[0]}-{c[1]}-l1={c[2]}-l2={c[3]}" for c in CASES])
def test_defaults_reach_the_exact_optimum_without_the_time_limit(loss, constraints, l1, l2):
    spec = random_spec(loss, constraints, 200 + CASES.index((loss, constraints, l1, l2)),
                       l1=l1, l2=l2)
    del spec["solver"]
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    projected = result.projected
    assert projected is not None and projected.max_violation <= 1e-6
    assert projected.objective - optimum <= 1e-2 * max(abs(optimum), 1e-1), (
        result.algorithm, projected.objective, optimum)
    assert projected.objective - optimum >= -1e-6 * max(1.0, abs(optimum))
    assert result.stats["stopped_by"] not in ("time_limit", "iterations")
    assert result.stats["method"] == result.algorithm and result.stats["method_reason"]


def robust_spec(seed: int) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]]]:
    """max of three mean logistic losses over shifted data (d = 4, 60 rows each), inline."""
    rng = np.random.default_rng(seed)
    data, terms = [], []
    for k in range(3):
        x = rng.normal(size=(60, 4)) + 0.5 * k
        y = np.where(x @ rng.normal(size=4) + rng.normal(size=60) > 0, 1.0, -1.0)
        data.append((x, y))
        terms.append({"type": "empirical_risk", "loss": "logistic",
                      "data": {"features": x.tolist(), "labels": y.tolist()}})
    return {"dimension": 4, "objective": {"type": "max_of", "terms": terms}}, data


def test_defaults_reach_the_robust_optimum_and_say_why_they_stopped():
    spec, data = robust_spec(5)
    result = solve(spec)
    w = cp.Variable(4)
    cp.Problem(cp.Minimize(cp.maximum(*[cp.sum(cp.logistic(-cp.multiply(y, x @ w))) / 60
                                        for x, y in data]))).solve(solver=cp.CLARABEL)

    def worst(v: np.ndarray) -> float:
        return max(float(np.logaddexp(0.0, -y * (x @ v)).mean()) for x, y in data)

    optimum = worst(w.value)
    assert worst(np.asarray(result.mean.solution)) - optimum <= 1e-2 * optimum
    assert result.stats["stopped_by"] not in ("time_limit", "iterations")
