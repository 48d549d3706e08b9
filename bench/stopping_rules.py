"""``iterations: "auto"`` before and after the stopping rules, on the rows of the defaults
table (docs/stopping-rules.md), in one run.

Rows (each against CVXPY + Clarabel's exact optimum, or for Adult the test error and the
training TPR ratios):

* ``max_of``: three logistic terms, d = 8, 1,800 rows, features of scale 0.03. Before: the
  robust path's old defaults, the games for a fixed 2,000 iterations at eta_w 0.05; the games
  with their stopping rule; after: no solver block (``auto``: the exact epigraph program).
* Adult with four equal-opportunity constraints TPR(G) >= 0.95 TPR(all), proxy-Lagrangian.
  Before: the old ``auto`` budget, a fixed 200,000 iterations; after: no iteration budget.
* QPs: ½w'Qw + c'w with linear constraints and a box: d = 10 with 30 rows, and d = 30 with
  600 sparse rows (time limit 60 s here, to bound the bench). Defaults (``auto``: Clarabel)
  and LightTouch named, with its stopping rule (the old rule cannot be run any more; it ran
  these to the time limit).
* A logistic regression with 24 linear constraints, the same two ways.

Writes bench/results/stopping_rules.json. Run: ``.venv/bin/python bench/stopping_rules.py``
(about five minutes).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adult_tuning import evaluate, shrunk  # noqa: E402

from tests.specs import exact_optimum, random_spec, robust_terms  # noqa: E402
from worker import solve  # noqa: E402
from worker.datasets.adult import adult_spec, load_adult  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "stopping_rules.json"
GROUPS = ("female", "male", "black", "white")
STATS = ("stopped_by", "iterations", "stages", "estimated_gap", "certified_gap", "dual_bound",
         "eta_w", "solve_s")


def timed(spec: dict, **solve_options) -> tuple[object, float]:
    began = time.perf_counter()
    result = solve(spec, **solve_options)
    return result, time.perf_counter() - began


def row(name: str, variant: str, result, seconds: float, **quality) -> dict:
    found = {"problem": name, "variant": variant, "wall_s": seconds, **quality}
    return found | {key: result.stats[key] for key in STATS if key in result.stats}


def robust_rows() -> list[dict]:
    terms = robust_terms(0, n=600)
    w, t = cp.Variable(8), cp.Variable()
    cp.Problem(cp.Minimize(t), [cp.sum(cp.logistic(-cp.multiply(y, x @ w))) / y.size <= t
                                for x, y in terms]).solve(solver=cp.CLARABEL)
    objective = {"type": "max_of", "terms": [
        {"type": "empirical_risk", "loss": "logistic",
         "data": {"features": x.tolist(), "labels": y.tolist()}} for x, y in terms]}
    rows = []
    for variant, solver in (("before: the games, 2,000 iterations, eta_w 0.05",
                             {"algorithm": "lagrangian", "iterations": 2000, "eta_w": 0.05}),
                            ("the games, iterations auto", {"algorithm": "lagrangian"}),
                            ("after: defaults", None)):
        spec = {"objective": objective} | ({"solver": solver} if solver else {})
        result, seconds = timed(spec)
        rows.append(row("max_of, 3 logistic terms, d=8, 1,800 rows", variant, result, seconds,
                        relative_gap=result.expected.objective / float(t.value) - 1.0))
    return rows


def adult_rows() -> list[dict]:
    train, test = load_adult()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        for variant, iterations in (("before: 200,000 iterations", 200_000),
                                    ("after: defaults", None)):
            spec = adult_spec(train, directory, algorithm="auto", iterations=1)
            spec["solver"] = {"seed": 0} | ({"iterations": iterations} if iterations else {})
            result, seconds = timed(spec, roots=[directory])
            train_scores = evaluate(train, *shrunk(result))
            rows.append(row("Adult, 4 equal-opportunity constraints", variant, result, seconds,
                            test_error=evaluate(test, *shrunk(result))["error"],
                            train_min_ratio=min(train_scores[g] for g in GROUPS),
                            train_max_violation=result.expected.max_violation))
    return rows


def sparse_qp(seed: int = 7, d: int = 30, m: int = 600) -> dict:
    """½w'Qw + c'w, Q = R R' + 0.1 I, m sparse random rows with slack at a point, box 2."""
    rng = np.random.default_rng(seed)
    root = rng.normal(size=(d, d)) / np.sqrt(d)
    a = sp.random(m, d, density=4 / d, random_state=seed, data_rvs=rng.standard_normal).tocsr()
    a = a[np.diff(a.indptr) > 0].toarray()
    inside = rng.uniform(-0.5, 0.5, size=d)
    b = a @ inside + rng.uniform(0.05, 1.0, size=a.shape[0]) * np.linalg.norm(a, axis=1)
    return {"spec_version": 1, "dimension": d, "bounds": {"lower": -2.0, "upper": 2.0},
            "objective": {"type": "quadratic", "Q": (root @ root.T + 0.1 * np.eye(d)).tolist(),
                          "c": rng.normal(size=d).tolist()},
            "constraints": [{"type": "linear", "A": a.tolist(), "b": b.tolist()}],
            "solver": {"seed": 0}}


def exact_rows() -> list[dict]:
    cases = [("QP, d=10, 30 rows", random_spec("quadratic", "linear", 0, d=10), {}),
             ("logistic, d=8, 24 rows", random_spec("logistic", "linear", 4), {}),
             ("QP, d=30, 600 sparse rows", sparse_qp(), {"time_limit_s": 60.0})]
    rows = []
    for name, spec, solver in cases:
        seed = spec["solver"]["seed"]
        optimum, _ = exact_optimum(spec)
        for variant, named in (("after: defaults", {}),
                               ("LightTouch, iterations auto", {"algorithm": "lighttouch"})):
            spec["solver"] = {"seed": seed, **solver, **named}
            result, seconds = timed(spec)
            rows.append(row(name, variant + (" (time limit 60 s)" if solver else ""),
                            result, seconds,
                            relative_gap=(result.projected.objective - optimum) / abs(optimum)))
    return rows


def main() -> None:
    rows = robust_rows() + exact_rows() + adult_rows()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    for found in rows:
        print(json.dumps(found))


if __name__ == "__main__":
    main()
