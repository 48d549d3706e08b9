"""Epro-SGD's O(1/T) rate with log T projections, next to SGD with a projection every step
and a OneProj-style single final projection (the shape of the Epro paper's Figure 1).

Problem: least squares with l2 = 0.1 (strongly convex) on 2,000 noisy examples, d = 20,
box [-1, 1] and 10 random linear constraints; the optimum f* comes from CVXPY (Clarabel).
For each iteration budget T and 3 seeds, the suboptimality f(x) - f* of each method's
projected answer (Result.projected) is averaged:

* ``epro_sgd``: Algorithm 1, ceil(log2(T/8 + 1)) projections;
* ``projected_sgd``: a projection after every step (T projections; budgets up to 10^4);
* ``oneproj``: FullTouch (SGD on f + gamma [max_i g_i]_+, steps eta/(l2 t)), one projection
  at the end — the penalized-SGD-then-project scheme of Mahdavi et al.'s OneProj, with the
  hinge penalty instead of its smoothed one.

Writes bench/results/epro_rate.json and epro_rate.png. Run: ``.venv/bin/python
bench/epro_rate.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import cvxpy as cp
import numpy as np

from worker import solve

RESULTS = Path(__file__).resolve().parent / "results"
BUDGETS = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000]
PROJECTED_SGD_MAX = 10_000
SEEDS = (0, 1, 2)
N, D, M, L2 = 2_000, 20, 10, 0.1


def problem(seed: int) -> tuple[dict, float]:
    """(spec without solver, exact optimum)."""
    rng = np.random.default_rng(100 + seed)
    x = rng.normal(size=(N, D))
    y = x @ rng.normal(size=D) + 0.5 * rng.normal(size=N)
    a = rng.normal(size=(M, D))
    b = a @ rng.uniform(-0.2, 0.2, size=D) + 0.05
    w = cp.Variable(D)
    objective = 0.5 * cp.sum_squares(x @ w - y) / N + L2 / 2 * cp.sum_squares(w)
    optimum = cp.Problem(cp.Minimize(objective), [a @ w <= b, w >= -1, w <= 1])
    optimum.solve(solver=cp.CLARABEL)
    spec = {"dimension": D, "bounds": {"lower": -1.0, "upper": 1.0},
            "objective": {"type": "empirical_risk", "loss": "squared", "l2": L2,
                          "data": {"features": x.tolist(), "labels": y.tolist()}},
            "constraints": [{"type": "linear", "A": a.tolist(), "b": b.tolist()}],
            "output": {"mixture": False, "project": True}}
    return spec, float(optimum.value)


def measure() -> dict:
    methods = {"epro_sgd": "epro_sgd", "projected_sgd": "projected_sgd",
               "oneproj": "fulltouch"}
    curves = {name: {"budgets": [], "suboptimality": [], "projections": [], "seconds": []}
              for name in methods}
    problems = [problem(seed) for seed in SEEDS]
    for budget in BUDGETS:
        for name, algorithm in methods.items():
            if name == "projected_sgd" and budget > PROJECTED_SGD_MAX:
                continue
            gaps, projections, seconds = [], [], []
            for seed, (spec, optimum) in zip(SEEDS, problems, strict=True):
                began = time.perf_counter()
                result = solve(dict(spec, solver={"algorithm": algorithm, "iterations": budget,
                                                  "seed": seed, "time_limit_s": 3600}))
                seconds.append(time.perf_counter() - began)
                gaps.append(max(result.projected.objective - optimum, 1e-12))
                projections.append(int(result.stats.get("projections", 1)))
            curve = curves[name]
            curve["budgets"].append(budget)
            curve["suboptimality"].append(float(np.mean(gaps)))
            curve["projections"].append(float(np.mean(projections)))
            curve["seconds"].append(float(np.mean(seconds)))
            print(name, budget, curve["suboptimality"][-1], curve["projections"][-1],
                  round(curve["seconds"][-1], 2), flush=True)
    return curves


def plot(curves: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    for name, curve in curves.items():
        axis.loglog(curve["budgets"], curve["suboptimality"], marker="o", label=name)
    first = curves["epro_sgd"]
    reference = first["suboptimality"][0] * first["budgets"][0] / np.array(first["budgets"])
    axis.loglog(first["budgets"], reference, "k--", linewidth=0.8, label="1/T")
    axis.set_xlabel("iterations T")
    axis.set_ylabel("f(x) - f* (projected answer)")
    axis.set_title("Strongly convex least squares, 10 linear constraints")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    curves = measure()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "epro_rate.json").write_text(json.dumps(
        {"problem": {"n": N, "d": D, "m": M, "l2": L2, "seeds": list(SEEDS)},
         "curves": curves}, indent=2) + "\n")
    plot(curves, RESULTS / "epro_rate.png")
    print(f"written to {RESULTS / 'epro_rate.json'} and epro_rate.png")


if __name__ == "__main__":
    main()
