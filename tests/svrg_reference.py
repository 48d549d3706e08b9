"""Plain-numpy references for the SVRG OL kernels: the online learners, the serial phase
without constraints, and the hashed batch selection, written from the papers' formulas
(Cutkosky & Busa-Fekete Algorithm 1 and §8.1; AdaGrad; FreeRex) with dense arithmetic and
random numbers drawn in the same order as the compiled loop.
"""

from __future__ import annotations

import numpy as np

from tests.reference import Xoroshiro, loss_slope
from worker.problem.compiled import CompiledProblem

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


class AdaGrad:
    """Diagonal AdaGrad on the box: w <- clip(w - eta g / sqrt(sum g^2))."""

    def __init__(self, d: int, eta: float):
        self.squares, self.eta = np.zeros(d), eta

    def step(self, w, g, lower, upper):
        self.squares += g * g
        scale = np.where(self.squares > 0, self.eta / np.sqrt(np.maximum(self.squares, 1e-300)),
                         0.0)
        return np.clip(w - scale * g, lower, upper)


class FreeRex:
    """Per-coordinate FreeRex (k = sqrt 5) with the box reduction g + |g| sign(z - clip z)."""

    def __init__(self, d: int):
        self.total, self.inverse_eta_sq = np.zeros(d), np.zeros(d)
        self.lipschitz, self.scale, self.z = np.zeros(d), np.zeros(d), np.zeros(d)

    def step(self, w, g, lower, upper):
        g = g + np.abs(g) * np.sign(self.z - np.clip(self.z, lower, upper))
        moving = g != 0
        total = self.total + g
        lipschitz = np.maximum(self.lipschitz, np.abs(g))
        inverse = np.maximum(self.inverse_eta_sq + 2 * g * g, lipschitz * np.abs(total))
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.maximum(self.scale, inverse / lipschitz**2)
            exponent = np.minimum(np.abs(total) / (np.sqrt(5.0) * np.sqrt(inverse)), 700.0)
            z = -np.sign(total) * np.expm1(exponent) / scale
        for name, new in (("total", total), ("lipschitz", lipschitz),
                          ("inverse_eta_sq", inverse), ("scale", scale), ("z", z)):
            getattr(self, name)[moving] = new[moving]
        return np.clip(self.z, lower, upper)


def inverse_frequency(problem: CompiledProblem) -> np.ndarray:
    """I_j = n / #{i : x_ij != 0} (0 for unused columns), shape (d,) (§8.1)."""
    counts = (problem.objective.features.toarray() != 0).sum(axis=0)
    return np.where(counts > 0, problem.n / np.maximum(counts, 1), 0.0)


def estimate(problem: CompiledProblem, i: int, w: np.ndarray, *, sparse: bool,
             anchor: np.ndarray, anchor_gradient: np.ndarray,
             batch_examples: int) -> np.ndarray:
    """Example i's part of the variance-reduced gradient, shape (d,), without the dense
    steps' anchor gradient and l2 term: (grad l_i(w) - grad l_i(v)) plus, when sparse, the
    §8.1 term G (.) I(x_i) on the columns the batch is expected to see (I_j <= N^), where
    grad l_i(v) is dropped instead."""
    o = problem.objective
    x = o.features[i].toarray().ravel()
    now = loss_slope(o.kind, x @ w, o.labels[i])
    then = loss_slope(o.kind, x @ anchor, o.labels[i])
    if not sparse:
        return (now - then) * x
    frequency = inverse_frequency(problem)
    reduced = (now - then) * x + anchor_gradient * frequency * (x != 0)
    return np.where(frequency <= batch_examples, reduced, now * x)


def serial_run(problem: CompiledProblem, *, learner: str, eta: float, sparse: bool,
               anchor: np.ndarray, anchor_gradient: np.ndarray, batch_examples: int, k_f: int,
               steps: int, seed: int) -> np.ndarray:
    """Iterates (steps + 1, d) of the serial phase of Algorithm 1 without constraints."""
    rng = Xoroshiro(seed)
    o, d = problem.objective, problem.d
    w = np.clip(np.zeros(d), problem.lower, problem.upper)
    model = AdaGrad(d, eta) if learner == "adagrad" else FreeRex(d)
    history = [w.copy()]
    for _ in range(steps):
        g = np.zeros(d) if sparse else anchor_gradient + o.l2 * w
        for i in [rng.randint(o.n) for _ in range(k_f)]:
            g += estimate(problem, i, w, sparse=sparse, anchor=anchor,
                          anchor_gradient=anchor_gradient, batch_examples=batch_examples) / k_f
        w = model.step(w, g, problem.lower, problem.upper)
        history.append(w.copy())
    return np.array(history)


def _mix64(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def selected_rows(key: int, n: int, fraction: float) -> np.ndarray:
    """Rows r with hash-uniform(key, r) < fraction (all rows when fraction >= 1)."""
    if fraction >= 1:
        return np.arange(n)
    uniforms = [(_mix64((key + r * GOLDEN) & MASK) >> 11) / 2.0**53 for r in range(n)]
    return np.flatnonzero(np.array(uniforms) < fraction)


def batch_gradient(problem: CompiledProblem, anchor: np.ndarray, key: int,
                   fraction: float) -> tuple[np.ndarray, int]:
    """(mean loss gradient at the anchor over the selected rows, their count)."""
    o = problem.objective
    rows = selected_rows(key, o.n, fraction)
    x = o.features[rows].toarray()
    slopes = loss_slope(o.kind, x @ anchor, o.labels[rows])
    return slopes @ x / max(rows.size, 1), int(rows.size)
