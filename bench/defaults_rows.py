"""The problems of ``defaults_matrix.py``: specs with no ``solver`` block, each with the
alternative a user would reach for on the same data (scikit-learn, CVXPY + Clarabel/HiGHS,
fairlearn), which also gives the exact optimum where one exists.

A row is a :class:`Row`: ``build(directory)`` writes its data as npz/npy files and returns
the spec; ``alternative(spec)`` runs the peer and returns ``(seconds, objective)``, its
objective evaluated by the same :func:`objective_of` as LightTouch's answer (exact optimum
from the same solve, or from a second tight solve where the peer is not exact).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from worker.algorithms.bounds.smooth_part import objective_value
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec


@dataclass(frozen=True)
class Row:
    """One problem: name, what it is, its spec builder, its alternative and the peer's name."""

    name: str
    shape: str
    build: Callable[[Path], dict]
    alternative: Callable[[dict, Path], tuple[float, float]]
    peer: str


def ref(directory: Path, name: str, array) -> dict:
    """Save ``array`` (dense or scipy sparse) in ``directory``; its data reference."""
    path = directory / name
    if sp.issparse(array):
        sp.save_npz(path, sp.csr_matrix(array))
        return {"uri": path.resolve().as_uri(), "format": "npz"}
    np.save(path, np.asarray(array))
    return {"uri": path.resolve().as_uri(), "format": "npy"}


def classification(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian features (n, d) with a bias column and noisy linear labels +-1."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[:, -1] = 1.0
    y = np.where(x @ rng.normal(size=d) + rng.normal(size=n) > 0, 1.0, -1.0)
    return x, y


def feasible_rows(m: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """m random rows A (m, d) and b (m,) with w = 0 strictly inside and some rows active."""
    rng = np.random.default_rng(seed + 1)
    a = rng.normal(size=(m, d))
    return a, rng.uniform(0.01, 0.1, size=m) * np.linalg.norm(a, axis=1)


def risk_spec(directory: Path, loss: str, x, y, *, constraints: list | None = None,
              l1: float = 0.0, l2: float = 0.0, bounds: dict | None = None) -> dict:
    """An empirical-risk spec over files in ``directory``, no solver block."""
    spec = {"spec_version": 1, "dimension": x.shape[1],
            "objective": {"type": "empirical_risk", "loss": loss, "l1": l1, "l2": l2,
                          "data": {"features": ref(directory, "x.npz", sp.csr_matrix(x)),
                                   "labels": ref(directory, "y.npy", y)}},
            "constraints": constraints or []}
    if bounds is not None:
        spec["bounds"] = bounds
    return spec


def compiled(spec: dict, directory: Path):
    """The spec compiled as the pipeline would (for the peers' objective values)."""
    return compile_problem(parse_spec(spec), DataSource([directory], data_settings()))


def objective_of(spec: dict, directory: Path, w: np.ndarray) -> float:
    """f(w) of the spec's (linear-model) objective."""
    return objective_value(compiled(spec, directory).objective, np.asarray(w, dtype=float))


def cvxpy_alternative(solver: str) -> Callable[[dict, Path], tuple[float, float]]:
    """CVXPY with ``solver`` on the compiled problem (the user's model of the same problem,
    built from the arrays): seconds to build and solve, and its objective."""

    def run(spec: dict, directory: Path) -> tuple[float, float]:
        problem = compiled(spec, directory)
        began = time.perf_counter()
        objective = problem.objective
        w = cp.Variable(problem.d)
        if objective.n == 0:
            q = sp.csr_matrix(objective.quadratic)
            f = 0.5 * cp.quad_form(w, cp.psd_wrap(q)) + objective.linear @ w
        else:
            margins = cp.multiply(objective.labels, objective.features @ w)
            f = {"hinge": lambda: cp.sum(cp.pos(1 - margins)),
                 "logistic": lambda: cp.sum(cp.logistic(-margins)),
                 "squared": lambda: 0.5 * cp.sum_squares(objective.features @ w
                                                         - objective.labels),
                 }[spec["objective"]["loss"]]() / objective.n
        f = f + objective.l2 / 2 * cp.sum_squares(w) + objective.l1 * cp.norm1(w)
        rows = [problem.constraints.matrix @ w <= problem.constraints.rhs] if problem.m else []
        finite = np.isfinite(problem.lower)
        rows += [w[finite] >= problem.lower[finite]] if finite.any() else []
        finite = np.isfinite(problem.upper)
        rows += [w[finite] <= problem.upper[finite]] if finite.any() else []
        cp.Problem(cp.Minimize(f), rows).solve(solver=solver)
        seconds = time.perf_counter() - began
        return seconds, objective_value(objective, w.value)

    return run


def sklearn_logistic(spec: dict, directory: Path) -> tuple[float, float]:
    """scikit-learn's LogisticRegression (lbfgs, no intercept: the data have a bias column)
    on the same objective: C = 1 / (l2 n)."""
    problem = compiled(spec, directory)
    objective = problem.objective
    began = time.perf_counter()
    model = LogisticRegression(C=1.0 / (objective.l2 * objective.n), fit_intercept=False,
                               max_iter=10_000)
    model.fit(objective.features, objective.labels)
    seconds = time.perf_counter() - began
    return seconds, objective_value(objective, model.coef_.ravel())


def warm_peers() -> None:
    """Solve a tiny problem with each peer once, so that no row pays a peer's first-call
    costs (CVXPY's canonicalization caches, the solvers' libraries, scikit-learn's
    validation), as :func:`worker.queue.warm_up.warm_up` spares LightTouch its own."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 3)), np.where(rng.normal(size=20) > 0, 1.0, -1.0)
    w = cp.Variable(3)
    margins = cp.multiply(y, x @ w)
    for solver, loss in ((cp.HIGHS, cp.sum(cp.pos(1 - margins))),
                         (cp.CLARABEL, cp.sum(cp.logistic(-margins))),
                         (cp.CLARABEL, cp.quad_form(w, cp.psd_wrap(np.eye(3))))):
        cp.Problem(cp.Minimize(loss + cp.norm1(w)), [w <= 1]).solve(solver=solver)
    LogisticRegression(fit_intercept=False).fit(x, y)


def tight_logistic_optimum(spec: dict, directory: Path) -> float:
    """The optimum of an unconstrained l2-logistic objective, to 1e-10 (for the quality of
    rows whose peer is scikit-learn at its default tolerance)."""
    problem = compiled(spec, directory)
    objective = problem.objective
    model = LogisticRegression(C=1.0 / (objective.l2 * objective.n), fit_intercept=False,
                               tol=1e-12, max_iter=100_000)
    model.fit(objective.features, objective.labels)
    return objective_value(objective, model.coef_.ravel())
