"""Plain-numpy reference implementations of the kernels, the oracle for their tests.

Written from the paper's pseudocode (LightTouch, Algorithms 1 and 4, §5.2) with dense
numpy arithmetic and a pure-Python xoroshiro128+, drawing random numbers in the same order
as the compiled loop so that the same seed gives the same iterates.
"""

from __future__ import annotations

import numpy as np

from worker.kernels.random import seed_state
from worker.losses import BY_CODE
from worker.problem.compiled import QUADRATIC, CompiledProblem

MASK = (1 << 64) - 1


class Xoroshiro:
    """xoroshiro128+ on Python integers."""

    def __init__(self, seed: int):
        self.s0, self.s1 = (int(x) for x in seed_state(seed))

    def _next(self) -> int:
        s0, s1 = self.s0, self.s1
        result = (s0 + s1) & MASK
        s1 ^= s0
        self.s0 = (((s0 << 24) | (s0 >> 40)) & MASK) ^ s1 ^ ((s1 << 16) & MASK)
        self.s1 = ((s1 << 37) | (s1 >> 27)) & MASK
        return result

    def uniform(self) -> float:
        return (self._next() >> 11) * (1.0 / 9007199254740992.0)

    def randint(self, n: int) -> int:
        return min(int(self.uniform() * n), n - 1)


def loss_slope(kind: int, score: np.ndarray, label: np.ndarray) -> np.ndarray:
    """The registered loss's numpy reference slope (:mod:`worker.losses`)."""
    return BY_CODE[kind].reference_slope(score, label)


def loss_value(kind: int, score: np.ndarray, label: np.ndarray) -> np.ndarray:
    """The registered loss's numpy reference value."""
    return BY_CODE[kind].reference_value(score, label)


def sampled_loss_gradient(problem: CompiledProblem, x: np.ndarray, w: np.ndarray,
                          rng: Xoroshiro, k_f: int) -> np.ndarray:
    """Qw + c, or the mean loss subgradient of k_f examples drawn by ``rng`` (x: dense (n, d))."""
    o = problem.objective
    if o.kind == QUADRATIC:
        return o.quadratic @ w + o.linear
    rows = [rng.randint(o.n) for _ in range(k_f)]
    slopes = loss_slope(o.kind, x[rows] @ w, o.labels[rows])
    return (slopes[:, None] * x[rows]).mean(axis=0)


def penalty_subgradient(problem: CompiledProblem, w: np.ndarray, penalty: float) -> np.ndarray:
    """penalty * a subgradient of [max_i (a_i . w - b_i)]_+ (the Epro paper's Eq. 7)."""
    values = problem.constraints.values(w)
    if values.size and values.max() > 0:
        return penalty * problem.constraints.matrix.toarray()[int(np.argmax(values))]
    return np.zeros_like(w)


def objective(problem: CompiledProblem, w: np.ndarray) -> float:
    o = problem.objective
    if o.kind == QUADRATIC:
        value = 0.5 * w @ (o.quadratic @ w) + o.linear @ w
    else:
        value = loss_value(o.kind, o.features @ w, o.labels).mean()
    return float(value + 0.5 * o.l2 * w @ w + o.l1 * np.abs(w).sum())


def run(problem: CompiledProblem, *, mode: str, iterations: int, gamma: float, eta_w: float,
        eta_p: float, minibatch: tuple[int, int, int] | None, groups: int, seed: int,
        nu: float = 0.999, step_rule: str = "schedule") -> dict:
    """Algorithm 1 (mode 'full') or Algorithm 4 with a dense p-update (mode 'light');
    ``step_rule`` "dog": eta_w r_t / sqrt(sum |direction|^2) throughout; "adagrad":
    eta_w (u_j - l_j) / sqrt(2 sum direction_j^2) per coordinate.

    Returns the iterates (T+1, d), the constraint checks and the final p.
    """
    rng = Xoroshiro(seed)
    o = problem.objective
    X = o.features.toarray()
    A = problem.constraints.matrix.toarray()
    b = problem.constraints.rhs
    m, d = A.shape
    size = -(-m // groups) if m else 0
    members = [np.arange(g * size, min((g + 1) * size, m)) for g in range(groups)]
    lam = o.l2
    w = np.clip(np.zeros(d), problem.lower, problem.upper)
    checks = 0
    u = np.zeros(groups)
    mu = np.array([max(0.0, (A[idx] @ w - b[idx]).max()) for idx in members])
    checks += m if mode == "light" else 0
    averages = {"f": [0.0, 0.0], "g": [0.0, 0.0], "p": [0.0, 0.0]}
    cost_f = (float(o.quadratic.nnz + d) if o.kind == QUADRATIC
              else 1.0 + o.features.nnz / max(o.n, 1))
    cost_g = max((m / max(groups, 1)) * (1.0 + problem.constraints.matrix.nnz / max(m, 1)), 1.0)
    history = [w.copy()]
    origin, radius, squared_sum = w.copy(), 1e-6 * (1.0 + np.linalg.norm(w)), 0.0
    squares = np.zeros(d)
    warmup = step_rule != "schedule"

    def mean(key):
        num, den = averages[key]
        return num / den if den > 0 else 0.0

    def record(key, value):
        averages[key] = [value + nu * averages[key][0], 1.0 + nu * averages[key][1]]

    for t in range(1, iterations + 1):
        eta = eta_w / (lam * t) if lam > 0 else eta_w / np.sqrt(t)
        if step_rule == "dog":
            eta = eta_w * radius / np.sqrt(max(squared_sum, 1e-300))
        elif step_rule == "adagrad":
            eta = eta_w / np.sqrt(t)
        if minibatch is not None:
            k_f, k_g, k_p = minibatch[0], min(minibatch[1], groups), min(minibatch[2], groups)
        else:
            r_f = np.sqrt(eta * mean("f") / cost_f)
            r_g = np.sqrt(eta * mean("g") / cost_g)
            r_p = np.sqrt(eta_p * mean("p") / cost_g)
            if r_f > 0 or r_g > 0 or r_p > 0:
                scale = 2.0 / r_f if r_f > 0 else 2.0 * cost_f / (cost_g * (r_g + r_p))
                k_f = 2
                k_g = min(max(2, min(groups, int(np.rint(scale * r_g)))), groups)
                k_p = max(1, min(groups, int(np.rint(scale * r_p))))
            else:
                k_f, k_g, k_p = 2, min(2, groups), 1
        if o.kind == QUADRATIC:
            grad = o.quadratic @ w + o.linear
        else:
            rows = [rng.randint(o.n) for _ in range(k_f)]
            slopes = loss_slope(o.kind, X[rows] @ w, o.labels[rows])
            samples = slopes[:, None] * X[rows]
            grad = samples.mean(axis=0)
            if k_f >= 2:
                record("f", max(0.0, ((samples ** 2).sum() - k_f * grad @ grad) / (k_f - 1)))
        step_g = np.zeros(d)
        if mode == "full" and m:
            values = A @ w - b
            checks += m
            i = int(np.argmax(values))
            if values[i] > 0:
                step_g = A[i].copy()
        elif mode == "light" and groups:
            p = np.exp(u - u.max())
            cumulative = np.cumsum(p)
            drawn = [int(np.searchsorted(cumulative, rng.uniform() * cumulative[-1],
                                         side="right")) for _ in range(k_g)]
            hits = 0
            for g in drawn:
                values = A[members[g]] @ w - b[members[g]]
                checks += len(members[g])
                if values.max() > 0:
                    hits += 1
                    step_g += A[members[g][int(np.argmax(values))]] / k_g
            if k_g >= 2:
                record("g", gamma**2 * max(0.0, (hits - k_g * step_g @ step_g) / (k_g - 1)))
            subset = []
            for j in range(groups - k_p, groups):
                r = rng.randint(j + 1)
                subset.append(j if r in subset else r)
            viol = np.array([max(0.0, (A[members[g]] @ w - b[members[g]]).max())
                             for g in subset])
            checks += sum(len(members[g]) for g in subset)
            record("p", (gamma * groups) ** 2 * ((viol - mu[subset]) ** 2).sum() / k_p)
            u += eta_p * gamma * mu
            u[subset] += eta_p * gamma * groups / k_p * (viol - mu[subset])
            mu[subset] = viol
        direction = grad + gamma * step_g + lam * w + o.l1 * np.sign(w)
        if warmup:
            squared_sum += direction @ direction
            eta = eta_w * radius / np.sqrt(squared_sum) if squared_sum > 0 else 0.0
        if step_rule == "adagrad":
            squares += direction**2
            with np.errstate(divide="ignore", invalid="ignore"):
                eta = np.where(squares > 0, eta_w * (problem.upper - problem.lower)
                               / np.sqrt(2.0 * squares), 0.0)
        w = np.clip(w - eta * direction, problem.lower, problem.upper)
        radius = max(radius, np.linalg.norm(w - origin)) if warmup else radius
        history.append(w.copy())
    return {"iterates": np.array(history), "checks": checks, "p": np.exp(u - u.max())}
