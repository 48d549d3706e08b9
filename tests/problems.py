"""Small random problems shared by the tests (compiled directly, and as specs)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.losses import LOSSES, TARGETS
from worker.problem.compiled import LOSS_CODES, QUADRATIC, CompiledProblem, ConstraintSet, Objective
from worker.problem.lattice_rows import lattice_edges


def random_constraints(kind: str, d: int, rng: np.random.Generator) -> ConstraintSet:
    """'linear' (feasible at a random interior point), 'ordering', 'lattice' or 'none'."""
    if kind == "linear":
        a = rng.normal(size=(2 * d, d))
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        inside = rng.uniform(-0.3, 0.3, size=d)
        return ConstraintSet(sp.csr_matrix(a), a @ inside + rng.uniform(0.0, 0.3, size=2 * d))
    if kind == "ordering":
        pairs = np.array([(i, j) for i in range(d) for j in range(i + 1, d)
                          if rng.uniform() < 0.3] or [(0, 1)])
        return ConstraintSet.of_orderings(pairs, d)
    if kind == "lattice":
        shape = [2] * int(np.log2(d))
        pairs = lattice_edges(shape, list(range(len(shape))), d, "constraints[0]")
        return ConstraintSet.of_orderings(pairs, d)
    return ConstraintSet(sp.csr_matrix((0, d)), np.zeros(0))


def random_problem(loss: str, constraint: str, *, d: int = 8, n: int = 60, l2: float = 0.0,
                   seed: int = 0, bound: float = 1.0, l1: float = 0.0) -> CompiledProblem:
    """A random problem: a loss of :data:`worker.losses.LOSSES` or ``"quadratic"``, box
    [-bound, bound]."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=d)
    if loss == "quadratic":
        root = rng.normal(size=(d, d)) / np.sqrt(d)
        q = sp.csr_matrix(root @ root.T)
        objective = Objective(QUADRATIC, sp.csr_matrix((0, d)), np.zeros(0), q,
                              rng.normal(size=d), l2, l1)
    else:
        x = rng.normal(size=(n, d)) * (rng.uniform(size=(n, d)) < 0.7)
        scores = x @ truth
        labels = scores + 0.3 * rng.normal(size=n) if LOSSES[loss].labels is TARGETS else \
            np.where(scores + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
        objective = Objective(LOSS_CODES[loss], sp.csr_matrix(x), labels,
                              sp.csr_matrix((d, d)), np.zeros(d), l2, l1)
    return CompiledProblem(objective, random_constraints(constraint, d, rng),
                           np.full(d, -bound), np.full(d, bound))
