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
    return _loss_samples(problem, x, w, rng, k_f).mean(axis=0)


def _loss_samples(problem: CompiledProblem, x: np.ndarray, w: np.ndarray, rng: Xoroshiro,
                  k_f: int) -> np.ndarray:
    """The loss subgradients of k_f examples drawn by ``rng``, shape (k_f, d)."""
    o = problem.objective
    rows = [rng.randint(o.n) for _ in range(k_f)]
    return loss_slope(o.kind, x[rows] @ w, o.labels[rows])[:, None] * x[rows]


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


class _Variances:
    """Discounted means (factor ``nu``) of the three gradient-variance estimates of §5.2."""

    def __init__(self, nu: float):
        self.nu = nu
        self.sums = {"f": [0.0, 0.0], "g": [0.0, 0.0], "p": [0.0, 0.0]}

    def mean(self, key: str) -> float:
        num, den = self.sums[key]
        return num / den if den > 0 else 0.0

    def record(self, key: str, value: float) -> None:
        num, den = self.sums[key]
        self.sums[key] = [value + self.nu * num, 1.0 + self.nu * den]


def _batch_sizes(problem: CompiledProblem, groups: int, eta: float, eta_p: float,
                 variances: _Variances) -> tuple[int, int, int]:
    """Minibatch sizes (k_f, k_g, k_p) balancing variance against cost (§5.2)."""
    o, m, d = problem.objective, problem.m, problem.d
    cost_f = (float(o.quadratic.nnz + d) if o.kind == QUADRATIC
              else 1.0 + o.features.nnz / max(o.n, 1))
    cost_g = max((m / max(groups, 1)) * (1.0 + problem.constraints.matrix.nnz / max(m, 1)), 1.0)
    r_f = np.sqrt(eta * variances.mean("f") / cost_f)
    r_g = np.sqrt(eta * variances.mean("g") / cost_g)
    r_p = np.sqrt(eta_p * variances.mean("p") / cost_g)
    if not (r_f > 0 or r_g > 0 or r_p > 0):
        return 2, min(2, groups), 1
    scale = 2.0 / r_f if r_f > 0 else 2.0 * cost_f / (cost_g * (r_g + r_p))
    k_g = min(max(2, min(groups, int(np.rint(scale * r_g)))), groups)
    return 2, k_g, max(1, min(k_g, groups, int(np.rint(scale * r_p))))


def _loss_gradient(problem: CompiledProblem, x: np.ndarray, w: np.ndarray, rng: Xoroshiro,
                   k_f: int, variances: _Variances) -> np.ndarray:
    """:func:`sampled_loss_gradient`, recording the sample variance of the k_f gradients."""
    if problem.objective.kind == QUADRATIC:
        return sampled_loss_gradient(problem, x, w, rng, k_f)
    samples = _loss_samples(problem, x, w, rng, k_f)
    grad = samples.mean(axis=0)
    if k_f >= 2:
        variances.record("f", max(0.0, ((samples ** 2).sum() - k_f * grad @ grad) / (k_f - 1)))
    return grad


def _full_step(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Algorithm 1: the row of the most violated constraint (zeros when none is violated)."""
    values = a @ w - b
    i = int(np.argmax(values))
    return a[i].copy() if values[i] > 0 else np.zeros_like(w)


class _LightSampler:
    """Algorithm 4's group distribution p = softmax(u) with stale violations mu (dense p-update).

    ``checks`` counts the constraint rows evaluated, as the compiled loop does.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, w: np.ndarray, groups: int):
        m = a.shape[0]
        size = -(-m // groups) if m else 0
        self.a, self.b, self.groups = a, b, groups
        self.members = [np.arange(g * size, min((g + 1) * size, m)) for g in range(groups)]
        self.u = np.zeros(groups)
        self.mu = np.array([self._violation(g, w) for g in range(groups)])
        self.checks = m

    def _violation(self, g: int, w: np.ndarray) -> float:
        return max(0.0, (self.a[self.members[g]] @ w - self.b[self.members[g]]).max())

    def step(self, w, k_g, k_p, gamma, eta_p, rng: Xoroshiro, variances: _Variances):
        """The averaged most-violated rows of k_g drawn groups; then the p-update on k_p groups."""
        p = np.exp(self.u - self.u.max())
        cumulative = np.cumsum(p)
        drawn = [int(np.searchsorted(cumulative, rng.uniform() * cumulative[-1], side="right"))
                 for _ in range(k_g)]
        checked = set()                     # a group is checked once per iteration
        step_g, hits = np.zeros_like(w), 0
        for g in drawn:
            values = self.a[self.members[g]] @ w - self.b[self.members[g]]
            self.checks += len(self.members[g]) if g not in checked else 0
            checked.add(g)
            if values.max() > 0:
                hits += 1
                step_g += self.a[self.members[g][int(np.argmax(values))]] / k_g
        if k_g >= 2:
            variances.record("g", gamma**2 * max(0.0, (hits - k_g * step_g @ step_g) / (k_g - 1)))
        self._update_p(w, k_p, gamma, eta_p, rng, variances, checked)
        return step_g

    def _update_p(self, w, k_p, gamma, eta_p, rng: Xoroshiro, variances: _Variances,
                  checked: set) -> None:
        subset = []
        for j in range(self.groups - k_p, self.groups):
            r = rng.randint(j + 1)
            subset.append(j if r in subset else r)
        viol = np.array([self._violation(g, w) for g in subset])
        self.checks += sum(len(self.members[g]) for g in set(subset) - checked)
        change = viol - self.mu[subset]
        variances.record("p", (gamma * self.groups) ** 2 * (change ** 2).sum() / k_p)
        self.u += eta_p * gamma * self.mu
        self.u[subset] += eta_p * gamma * self.groups / k_p * change
        self.mu[subset] = viol


class _StepRule:
    """The step size: "schedule" eta_w/(lambda t) or eta_w/sqrt(t); "dog" eta_w r_t /
    sqrt(sum |direction|^2); "adagrad" eta_w (u_j - l_j) / sqrt(2 sum direction_j^2) per
    coordinate."""

    def __init__(self, rule: str, eta_w: float, l2: float, w: np.ndarray):
        self.rule, self.eta_w, self.l2 = rule, eta_w, l2
        self.origin, self.radius = w.copy(), 1e-6 * (1.0 + np.linalg.norm(w))
        self.squared_sum, self.squares = 0.0, np.zeros_like(w)

    def planned(self, t: int) -> float:
        """The scalar step the minibatch sizes are chosen for, before the direction is known."""
        if self.rule == "dog":
            return self.eta_w * self.radius / np.sqrt(max(self.squared_sum, 1e-300))
        if self.l2 > 0 and self.rule == "schedule":
            return self.eta_w / (self.l2 * t)
        return self.eta_w / np.sqrt(t)

    def taken(self, t: int, direction: np.ndarray, lower, upper):
        """The step applied to ``direction`` (scalar, or per coordinate for "adagrad")."""
        if self.rule == "schedule":
            return self.planned(t)
        self.squared_sum += direction @ direction
        if self.rule == "dog":
            if self.squared_sum == 0:
                return 0.0
            return self.eta_w * self.radius / np.sqrt(self.squared_sum)
        self.squares += direction**2
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.squares > 0,
                            self.eta_w * (upper - lower) / np.sqrt(2.0 * self.squares), 0.0)

    def moved(self, w: np.ndarray) -> None:
        if self.rule != "schedule":
            self.radius = max(self.radius, np.linalg.norm(w - self.origin))


def run(problem: CompiledProblem, *, mode: str, iterations: int, gamma: float, eta_w: float,
        eta_p: float, minibatch: tuple[int, int, int] | None, groups: int, seed: int,
        nu: float = 0.999, step_rule: str = "schedule") -> dict:
    """Algorithm 1 (mode 'full') or Algorithm 4 with a dense p-update (mode 'light'), with
    the step rule ``step_rule`` (:class:`_StepRule`).

    Returns the iterates (T+1, d), the constraint checks and the final p.
    """
    rng, o = Xoroshiro(seed), problem.objective
    x, a, b = o.features.toarray(), problem.constraints.matrix.toarray(), problem.constraints.rhs
    m = a.shape[0]
    w = np.clip(np.zeros(problem.d), problem.lower, problem.upper)
    light = _LightSampler(a, b, w, groups) if mode == "light" and groups else None
    full_checks = 0
    variances, steps, history = _Variances(nu), _StepRule(step_rule, eta_w, o.l2, w), [w.copy()]
    for t in range(1, iterations + 1):
        if minibatch is not None:
            k_f, k_g, k_p = minibatch[0], min(minibatch[1], groups), min(minibatch[2], groups)
        else:
            k_f, k_g, k_p = _batch_sizes(problem, groups, steps.planned(t), eta_p, variances)
        grad = _loss_gradient(problem, x, w, rng, k_f, variances)
        step_g = np.zeros_like(w)
        if mode == "full" and m:
            step_g, full_checks = _full_step(a, b, w), full_checks + m
        elif light is not None:
            step_g = light.step(w, k_g, k_p, gamma, eta_p, rng, variances)
        direction = grad + gamma * step_g + o.l2 * w + o.l1 * np.sign(w)
        w = np.clip(w - steps.taken(t, direction, problem.lower, problem.upper) * direction,
                    problem.lower, problem.upper)
        steps.moved(w)
        history.append(w.copy())
    u = light.u if light is not None else np.zeros(groups)
    checks = full_checks + (light.checks if light is not None else 0)
    return {"iterates": np.array(history), "checks": checks, "p": np.exp(u - u.max())}
