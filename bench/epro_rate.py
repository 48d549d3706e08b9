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

The ``l1`` variant adds l1 ||w||_1 (L1 = 0.2) to the same problems, with the true weights
zero on about half of the coordinates (a sparse optimum), and compares Epro-ORDA
(Algorithm 3, proximal l1 steps, ceil(log2(T/16 + 1)) projections) with Epro-SGD and
OneProj (both step on the subgradient l1 sign(w)): suboptimality, and the sparsity of the
projected answer — its exact zeros, its coordinates within 1e-6 of zero, and the optimum's
coordinates within 1e-6 of zero (CVXPY's interior point is not exactly sparse).

Writes bench/results/epro_rate.json, epro_rate.png and epro_rate_l1.png. Run:
``.venv/bin/python bench/epro_rate.py``.
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
L1 = 0.2
#: |w_j| at most this counts as (numerically) zero.
NEAR_ZERO = 1e-6
METHODS = {"epro_sgd": "epro_sgd", "projected_sgd": "projected_sgd", "oneproj": "fulltouch"}
L1_METHODS = {"epro_orda": "epro_orda", "epro_sgd": "epro_sgd", "oneproj": "fulltouch"}


def problem(seed: int, l1: float = 0.0) -> tuple[dict, float, np.ndarray]:
    """(spec without solver, exact optimum, exact solution (D,)); with l1 > 0 the true
    weights are zero on about half of the coordinates."""
    rng = np.random.default_rng(100 + seed)
    x = rng.normal(size=(N, D))
    truth = rng.normal(size=D)
    if l1 > 0:
        truth *= np.random.default_rng(200 + seed).uniform(size=D) < 0.5
    y = x @ truth + 0.5 * rng.normal(size=N)
    a = rng.normal(size=(M, D))
    b = a @ rng.uniform(-0.2, 0.2, size=D) + 0.05
    w = cp.Variable(D)
    objective = 0.5 * cp.sum_squares(x @ w - y) / N + L2 / 2 * cp.sum_squares(w) + \
        l1 * cp.norm1(w)
    optimum = cp.Problem(cp.Minimize(objective), [a @ w <= b, w >= -1, w <= 1])
    optimum.solve(solver=cp.CLARABEL)
    spec = {"dimension": D, "bounds": {"lower": -1.0, "upper": 1.0},
            "objective": {"type": "empirical_risk", "loss": "squared", "l2": L2, "l1": l1,
                          "data": {"features": x.tolist(), "labels": y.tolist()}},
            "constraints": [{"type": "linear", "A": a.tolist(), "b": b.tolist()}],
            "output": {"mixture": False, "project": True}}
    return spec, float(optimum.value), np.asarray(w.value)


def measure(methods: dict[str, str], l1: float = 0.0) -> dict:
    """Mean over SEEDS of each method's projected answer at each budget."""
    curves = {name: {"budgets": [], "suboptimality": [], "projections": [], "seconds": [],
                     "exact_zeros": [], "near_zeros": []} for name in methods}
    problems = [problem(seed, l1) for seed in SEEDS]
    for budget in BUDGETS:
        for name, algorithm in methods.items():
            if name == "projected_sgd" and budget > PROJECTED_SGD_MAX:
                continue
            runs = []
            for seed, (spec, optimum, _) in zip(SEEDS, problems, strict=True):
                began = time.perf_counter()
                result = solve(dict(spec, solver={"algorithm": algorithm, "iterations": budget,
                                                  "seed": seed, "time_limit_s": 3600}))
                answer = np.abs(result.projected.solution)
                runs.append((max(result.projected.objective - optimum, 1e-12),
                             int(result.stats.get("projections", 1)),
                             time.perf_counter() - began, int(np.count_nonzero(answer == 0)),
                             int(np.count_nonzero(answer <= NEAR_ZERO))))
            curve = curves[name]
            curve["budgets"].append(budget)
            for key, values in zip(("suboptimality", "projections", "seconds", "exact_zeros",
                                    "near_zeros"), zip(*runs, strict=True), strict=True):
                curve[key].append(float(np.mean(values)))
            print(f"l1={l1}", name, budget, *(f"{k}={curve[k][-1]:.4g}" for k in curve
                                              if k != "budgets"), flush=True)
    return curves


def optimum_zeros(l1: float) -> float:
    """Mean over SEEDS of the exact solution's coordinates within NEAR_ZERO of zero."""
    return float(np.mean([np.count_nonzero(np.abs(problem(seed, l1)[2]) <= NEAR_ZERO)
                          for seed in SEEDS]))


def plot(curves: dict, path: Path, *, title: str, zeros: float | None = None) -> None:
    """Suboptimality vs T (and, given the optimum's zero count, the answers' zeros vs T)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 1 if zeros is None else 2
    figure, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
    axis = axes[0, 0]
    for name, curve in curves.items():
        axis.loglog(curve["budgets"], curve["suboptimality"], marker="o", label=name)
    first = next(iter(curves.values()))
    reference = first["suboptimality"][0] * first["budgets"][0] / np.array(first["budgets"])
    axis.loglog(first["budgets"], reference, "k--", linewidth=0.8, label="1/T")
    axis.set_xlabel("iterations T")
    axis.set_ylabel("f(x) - f* (projected answer)")
    axis.set_title(title)
    axis.legend()
    if zeros is not None:
        axis = axes[0, 1]
        for name, curve in curves.items():
            line, = axis.semilogx(curve["budgets"], curve["near_zeros"], marker="o",
                                  label=f"{name}: |w| <= {NEAR_ZERO:g}")
            axis.semilogx(curve["budgets"], curve["exact_zeros"], marker="x", linestyle=":",
                          color=line.get_color(), label=f"{name}: w = 0")
        axis.axhline(zeros, color="k", linestyle="--", linewidth=0.8,
                     label=f"optimum: |w*| <= {NEAR_ZERO:g}")
        axis.set_xlabel("iterations T")
        axis.set_ylabel(f"zero coordinates of the answer (of d = {D})")
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    curves = measure(METHODS)
    sparse = measure(L1_METHODS, L1)
    zeros = optimum_zeros(L1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "epro_rate.json").write_text(json.dumps(
        {"problem": {"n": N, "d": D, "m": M, "l2": L2, "seeds": list(SEEDS)},
         "curves": curves,
         "l1": {"problem": {"l1": L1, "optimum_near_zeros": zeros,
                            "near_zero": NEAR_ZERO}, "curves": sparse}}, indent=2) + "\n")
    plot(curves, RESULTS / "epro_rate.png",
         title="Strongly convex least squares, 10 linear constraints")
    plot(sparse, RESULTS / "epro_rate_l1.png", zeros=zeros,
         title=f"The same with l1 = {L1} (sparse truth)")
    print(f"written to {RESULTS / 'epro_rate.json'}, epro_rate.png and epro_rate_l1.png")


if __name__ == "__main__":
    main()
