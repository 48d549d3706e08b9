"""Random small problems as spec dicts (inline data), with a CVXPY model of the same problem;
an example cut short."""

from __future__ import annotations

import json
from pathlib import Path

import cvxpy as cp
import numpy as np

from worker.losses import LOSSES as REGISTERED
from worker.losses import PAIRWISE_HINGE, TARGETS

#: Every loss of :data:`worker.losses.LOSSES`, the pairwise ranking loss and the quadratic.
LOSSES = (*REGISTERED, PAIRWISE_HINGE, "quadratic")
CONSTRAINT_KINDS = ("linear", "ordering_pairs", "ordering_chain", "lattice", "mixed")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def short_fairness_spec() -> dict:
    """The Adult fairness example stopped at 2,000 iterations (about a second): its last
    progress report's max violation (about 0.05, the running average's) is far from its
    Result's expected one (about 1e-10), so a figure read from the wrong one shows."""
    spec = json.loads((EXAMPLES / "adult_fairness_table.json").read_text())
    spec["solver"]["iterations"] = 2000
    return spec


def _constraints(kind: str, d: int, rng: np.random.Generator) -> list[dict]:
    blocks = []
    if kind in ("linear", "mixed"):
        a = rng.normal(size=(3 * d, d))
        inside = np.sort(rng.uniform(-0.2, 0.2, size=d))  # also satisfies pairs i < j
        b = a @ inside + rng.uniform(0.0, 0.2, size=3 * d) * np.linalg.norm(a, axis=1)
        blocks.append({"type": "linear", "A": a.tolist(), "b": b.tolist()})
    if kind in ("ordering_pairs", "mixed"):
        pairs = [[i, j] for i in range(d) for j in range(i + 1, d) if rng.uniform() < 0.25]
        blocks.append({"type": "ordering", "pairs": pairs or [[0, 1]]})
    if kind == "ordering_chain":
        blocks.append({"type": "ordering", "chain": rng.permutation(d).tolist()})
    if kind == "lattice":
        blocks.append({"type": "monotone_lattice", "shape": [2] * int(np.log2(d)),
                       "increasing": list(range(int(np.log2(d))))})
    return blocks


def random_spec(loss: str, constraints: str, seed: int, *, d: int = 8, n: int = 80,
                l2: float = 0.0, l1: float = 0.0, iterations: int = 100_000) -> dict:
    """A spec dict with inline data; d must be a power of two for 'lattice'."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=d)
    if loss == "quadratic":
        root = rng.normal(size=(d, d)) / np.sqrt(d)
        objective = {"type": "quadratic", "Q": (root @ root.T).tolist(),
                     "c": rng.normal(size=d).tolist(), "l2": l2, "l1": l1}
    elif loss == "pairwise_hinge":
        plus, minus = rng.normal(size=(n, d)), rng.normal(size=(n, d))
        swap = (plus - minus) @ truth + 0.5 * rng.normal(size=n) < 0
        plus[swap], minus[swap] = minus[swap].copy(), plus[swap].copy()
        objective = {"type": "empirical_risk", "loss": loss, "l2": l2, "l1": l1,
                     "data": {"positive": plus.tolist(), "negative": minus.tolist()}}
    else:
        x = rng.normal(size=(n, d))
        scores = x @ truth
        y = scores + 0.3 * rng.normal(size=n) if REGISTERED[loss].labels is TARGETS else \
            np.where(scores + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
        objective = {"type": "empirical_risk", "loss": loss, "l2": l2, "l1": l1,
                     "data": {"features": x.tolist(), "labels": y.tolist()}}
    return {"spec_version": 1, "dimension": d, "bounds": {"lower": -1.0, "upper": 1.0},
            "objective": objective, "constraints": _constraints(constraints, d, rng),
            "solver": {"iterations": iterations, "seed": seed}}


def exact_optimum(spec: dict) -> tuple[float, np.ndarray]:
    """Solve the same problem with CVXPY (Clarabel): (optimal value, solution)."""
    d = spec["dimension"]
    w = cp.Variable(d)
    obj = spec["objective"]
    if obj["type"] == "quadratic":
        q = np.array(obj["Q"])
        q = (q + q.T) / 2
        f = 0.5 * cp.quad_form(w, cp.psd_wrap(q)) + np.array(obj["c"]) @ w
    elif obj["loss"] == "pairwise_hinge":
        diff = np.array(obj["data"]["positive"]) - np.array(obj["data"]["negative"])
        weights = np.asarray(obj["data"].get("weights", np.ones(diff.shape[0])))
        f = weights @ cp.pos(1 - diff @ w) / weights.sum()
    else:
        f = _weighted_risk(obj, w)
    f = f + obj.get("l2", 0.0) / 2 * cp.sum_squares(w) + obj.get("l1", 0.0) * cp.norm1(w)
    cons = [w >= spec["bounds"]["lower"], w <= spec["bounds"]["upper"]]
    for block in spec["constraints"]:
        if block["type"] == "linear":
            cons.append(np.array(block["A"]) @ w <= np.array(block["b"]))
        elif block["type"] == "ordering":
            pairs = block.get("pairs") or list(zip(block["chain"][:-1], block["chain"][1:],
                                                   strict=True))
            cons += [w[i] <= w[j] for i, j in pairs]
        else:
            cons += _monotone_lattice(block, w)
    problem = cp.Problem(cp.Minimize(f), cons)
    problem.solve(solver=cp.CLARABEL)
    return float(problem.value), np.asarray(w.value)


def _monotone_lattice(block: dict, w: cp.Variable) -> list:
    """A monotone_lattice block's constraints: each vertex (C order over ``shape``) at most
    its next along an ``increasing`` axis, at least it along a ``decreasing`` one."""
    vertices = np.arange(int(np.prod(block["shape"]))).reshape(block["shape"])
    cons = []
    for axis in [*block["increasing"], *block.get("decreasing", [])]:
        size = block["shape"][axis]
        below = np.take(vertices, range(size - 1), axis=axis).ravel()
        above = np.take(vertices, range(1, size), axis=axis).ravel()
        if axis not in block["increasing"]:
            below, above = above, below
        if below.size:
            cons.append(w[below] <= w[above])
    return cons


def _weighted_risk(objective: dict, w: cp.Variable):
    """The objective's mean loss in CVXPY, weighted by ``data.weights`` when given:
    sum_i c_i loss_i / sum_i c_i, each example's loss the record's reference on its row."""
    x, y = np.array(objective["data"]["features"]), np.array(objective["data"]["labels"])
    record = REGISTERED[objective["loss"]]
    signed = record.labels.signed(y)
    if "weights" not in objective["data"]:
        return record.exact_reference(x @ w, signed)
    weights = np.asarray(objective["data"]["weights"], dtype=np.float64)
    if objective["loss"] == "hinge":       # one vectorized term: thousands of rows compile
        return weights @ cp.pos(1 - cp.multiply(signed, x @ w)) / weights.sum()
    rows = np.flatnonzero(weights > 0)
    return sum(weights[i] * record.exact_reference(x[i:i + 1] @ w, signed[i:i + 1])
               for i in rows) / weights.sum()


def robust_terms(seed: int, *, d: int = 8, n: int = 300, scale: float = 0.03
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Three logistic terms (features (n, d), labels (n,)) with different best separators and
    features of scale ``scale``, so the min-max optimum's weights are large (a fixed step of
    0.05 does not reach them in a few thousand steps)."""
    rng = np.random.default_rng(seed)
    terms = []
    for k in range(3):
        x = rng.normal(size=(n, d))
        x[:, -1] = 1.0
        truth = 2.0 * rng.normal(size=d)
        truth[0] = 6.0 * (k - 1)
        y = np.where(x @ truth + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
        terms.append((scale * x, y))
    return terms
