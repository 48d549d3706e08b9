"""The compiled problem: plain float64 arrays ready for the numba kernels.

A :class:`CompiledProblem` is what every algorithm, the shrinking step and the projection
consume. It knows nothing of JSON or pydantic; :mod:`worker.problem.compile` builds it from a spec.

Every constraint this layer holds is linear, ``g_i(w) = a_i . w - b_i <= 0`` with
``||a_i||_2 = 1`` (LightTouch paper, §2.2: unit-norm rows make the gamma of Lemma 1
comparable across constraints). Ordering and lattice constraints are the rows
``(e_i - e_j) / sqrt(2)`` with ``b = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from worker.losses import LOSSES, QUADRATIC
from worker.problem.csr import as_csr
from worker.problem.rates import RateSet, TrueRate

__all__ = ["LOSS_CODES", "QUADRATIC", "CompiledProblem", "ConstraintSet",
           "Objective"]

#: Objective kinds, as the integer codes the kernels switch on (:mod:`worker.losses`).
LOSS_CODES = {name: record.code for name, record in LOSSES.items()}
_SQRT_HALF = float(np.sqrt(0.5))


@dataclass(frozen=True)
class Objective:
    """f(w) = (1/n) sum_i c_i loss(x_i . w, y_i) + r(w), or (1/2) w'Qw + c'w + r(w), with the
    regularizer r(w) = l1 ||w||_1 + (l2/2)||w||^2 and example weights c of mean 1 (all 1
    without weights: the mean loss).

    Attributes
    ----------
    kind : int
        A loss code of :data:`LOSS_CODES` (:mod:`worker.losses`) or ``QUADRATIC``.
        ``pairwise_hinge`` is compiled to its base loss (hinge) on rows ``x+ - x-`` with
        labels 1 (:data:`worker.losses.PAIRWISE_BASE`).
    features : scipy.sparse.csr_matrix, shape (n, d)
        Example rows (empty, shape (0, d), for ``QUADRATIC``).
    labels : ndarray, shape (n,)
        As the loss's label rule gives them to the kernels: +-1 for class labels, real
        targets for squared.
    quadratic : scipy.sparse.csr_matrix, shape (d, d)
        Symmetric PSD Q (empty for losses).
    linear : ndarray, shape (d,)
        c of the quadratic objective (zeros for losses).
    l2 : float
        Strong-convexity weight; > 0 makes f l2-strongly convex.
    l1 : float
        Weight of ||w||_1 (sparsity; its subgradient at w_j = 0 is taken as 0).
    weights : ndarray, shape (n,), or None
        The example weights c, divided by their mean so that they sum to n
        (:func:`worker.problem.weights.mean_one`); None: every example weighs 1.
    """

    kind: int
    features: sp.csr_matrix
    labels: np.ndarray
    quadratic: sp.csr_matrix
    linear: np.ndarray
    l2: float = 0.0
    l1: float = 0.0
    weights: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of examples (0 for a quadratic objective)."""
        return int(self.features.shape[0])

    def example_weights(self) -> np.ndarray:
        """The weights c (n,) of mean 1: :attr:`weights`, or ones without weights."""
        return np.ones(self.n) if self.weights is None else self.weights


@dataclass(frozen=True)
class ConstraintSet:
    """m linear constraints ``A w <= b`` with unit-norm rows.

    Attributes
    ----------
    matrix : scipy.sparse.csr_matrix, shape (m, d)
        Rows a_i with ``||a_i||_2 = 1``, sorted column indices, float64.
    rhs : ndarray, shape (m,)
        b.
    orderings : ndarray of int64, shape (m, 2), or None
        When every row is an ordering its constraint type declared
        (:attr:`worker.problem.constraint_types.ConstraintType.orderings`): row k is
        ``w_i <= w_j`` for ``(i, j) = orderings[k]`` (built by :meth:`of_orderings`). None
        for any other rows; :func:`worker.projection.project` takes its isotonic path only
        with them.
    """

    matrix: sp.csr_matrix
    rhs: np.ndarray
    orderings: np.ndarray | None = None

    @classmethod
    def of_orderings(cls, pairs: np.ndarray, d: int) -> ConstraintSet:
        """Rows ``(e_i - e_j)/sqrt(2) . w <= 0``, i.e. ``w_i <= w_j``, one per row (i, j) of
        ``pairs`` (shape (m, 2)), carrying the pairs as their :attr:`orderings`."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        m = pairs.shape[0]
        data = np.tile([_SQRT_HALF, -_SQRT_HALF], m)
        matrix = sp.csr_matrix((data, (np.repeat(np.arange(m), 2), pairs.ravel())),
                               shape=(m, d))
        return cls(as_csr(matrix), np.zeros(m), pairs)

    @classmethod
    def stacked(cls, blocks: list[ConstraintSet], d: int) -> ConstraintSet:
        """The blocks' rows in order; orderings when every block has them."""
        if not blocks:
            return cls(sp.csr_matrix((0, d)), np.zeros(0))
        matrix = sp.csr_matrix(sp.vstack([block.matrix for block in blocks], format="csr"))
        matrix.sort_indices()
        orderings = None if any(block.orderings is None for block in blocks) \
            else np.concatenate([block.orderings for block in blocks])
        return cls(matrix, np.concatenate([block.rhs for block in blocks]), orderings)

    @property
    def m(self) -> int:
        """Number of constraints."""
        return int(self.matrix.shape[0])

    def values(self, w: np.ndarray) -> np.ndarray:
        """g(w) = A w - b, shape (m,) for w of shape (d,), or (T, m) for w of shape (T, d)."""
        if w.ndim == 1:
            return self.matrix @ w - self.rhs
        return (self.matrix @ w.T).T - self.rhs


@dataclass(frozen=True)
class CompiledProblem:
    """min f(w) over the box W = [lower, upper] subject to A w <= b.

    Attributes
    ----------
    objective : Objective
    constraints : ConstraintSet
    lower, upper : ndarray, shape (d,)
        The simple domain W, projected onto at every step (may hold -inf/+inf).
    notes : list of str
        Things compilation decided that the user should know (e.g. dropped zero rows).
    rates : RateSet or None
        Rate constraints (:mod:`worker.problem.rates`), not linear in w: only the game algorithms
        handle them. ``m`` counts the linear rows only; ``m_total`` adds the rates.
    true_rate : TrueRate or None
        A rate as the objective (:mod:`worker.problem.rate_objective`): ``objective`` is then
        its hinge proxy, which only the proxy-Lagrangian plays, and every candidate is
        scored on this true rate.
    """

    objective: Objective
    constraints: ConstraintSet
    lower: np.ndarray
    upper: np.ndarray
    notes: list[str] = field(default_factory=list)
    rates: RateSet | None = None
    true_rate: TrueRate | None = None

    @property
    def d(self) -> int:
        """Dimension of w."""
        return int(self.lower.shape[0])

    @property
    def m(self) -> int:
        """Number of constraints g_i."""
        return self.constraints.m

    @property
    def n(self) -> int:
        """Number of examples."""
        return self.objective.n

    @property
    def examples(self) -> int:
        """The objective's examples, as ``Result.sizes`` reports them: a rate objective's
        every row (its proxy's rows are only those the rate counts), else :attr:`n`."""
        if self.true_rate is not None:
            return int(self.true_rate.rate.features.shape[0])
        return self.n

    @property
    def m_total(self) -> int:
        """Linear constraints plus rate constraints."""
        return self.m + (self.rates.m if self.rates is not None else 0)
