"""Two unbiased one-example estimators of a weighted mean loss's gradient, compared exactly.

For example weights c of mean 1 the gradient is G = (1/n) sum_i c_i g_i (g_i = slope_i x_i).
Drawing i uniformly and taking c_i g_i is unbiased, as is drawing i with probability c_i / n
and taking g_i (what the kernels do: :func:`worker.kernels.objective.sample_example`). Their
variances E|estimate|^2 - |G|^2 are

    scaled by weight   (1/n) sum_i c_i^2 |g_i|^2 - |G|^2
    drawn by weight    (1/n) sum_i c_i   |g_i|^2 - |G|^2

computed here exactly (no sampling, no timing) on UCI Adult's numeric columns (standardized,
with an intercept), at the weighted logistic regression's optimum and at w = 0, for several
laws of the weights. Writes ``bench/results/weighted_sampling.json``. Usage::

    python bench/weighted_sampling.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from lighttouch.datasets import adult

COLUMNS = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
OUT = Path(__file__).resolve().parent / "results" / "weighted_sampling.json"


def adult_rows() -> tuple[np.ndarray, np.ndarray]:
    """Standardized numeric columns and an intercept (n, 6), labels +-1 (n,)."""
    train, _ = adult()
    x = train[COLUMNS].to_numpy(dtype=np.float64)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    y = np.where(train["Y"] == ">50K", 1.0, -1.0)
    return np.hstack([x, np.ones((x.shape[0], 1))]), y


def weight_laws(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Weights of several spreads, each divided by its mean."""
    laws = {"uniform[0,3)": rng.uniform(0.0, 3.0, n),
            "lognormal sigma=1": rng.lognormal(0.0, 1.0, n),
            "lognormal sigma=2": rng.lognormal(0.0, 2.0, n),
            "half zero, half uniform[0,2)": np.where(rng.uniform(size=n) < 0.5, 0.0,
                                                     rng.uniform(0.0, 2.0, n))}
    return {name: c / c.mean() for name, c in laws.items()}


def fitted(x: np.ndarray, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The weighted mean logistic loss's minimizer."""
    def value(w):
        margins = y * (x @ w)
        slopes = -y / (1.0 + np.exp(margins))
        return (c @ np.logaddexp(0.0, -margins)) / c.size, x.T @ (c * slopes) / c.size
    return minimize(value, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B").x


def variances(x: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray) -> dict[str, float]:
    """Both estimators' variances at w (module docstring)."""
    slopes = -y / (1.0 + np.exp(y * (x @ w)))
    squares = slopes ** 2 * (x ** 2).sum(axis=1)                    # |g_i|^2
    mean = x.T @ (c * slopes) / c.size
    scaled = float((c ** 2) @ squares / c.size - mean @ mean)
    drawn = float(c @ squares / c.size - mean @ mean)
    return {"scaled": scaled, "drawn": drawn, "ratio_scaled_over_drawn": scaled / drawn}


def main() -> None:
    x, y = adult_rows()
    rng = np.random.default_rng(0)
    rows = []
    for law, c in weight_laws(y.size, rng).items():
        for where, w in (("optimum", fitted(x, y, c)), ("w=0", np.zeros(x.shape[1]))):
            rows.append({"weights": law, "at": where, **variances(x, y, c, w)})
            print(rows[-1])
    OUT.write_text(json.dumps({"rows": rows, "examples": int(y.size),
                               "loadavg": Path("/proc/loadavg").read_text().split()[:3],
                               "cpus": os.cpu_count()}, indent=2) + "\n")


if __name__ == "__main__":
    main()
