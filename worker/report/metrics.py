"""The report's numbers on plain arrays: objective, classification error, linear rows and
rates of a deployed point, a mixture in expectation over its weights (Cotter, Jiang,
Sridharan 2019, §5: the stochastic classifier draws member j with probability p_j, so every
rate and loss is the p-weighted mean of the members').

A prediction is positive when the score x.w is > 0, as in :mod:`worker.problem.rates`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from worker.losses import LOSSES, SOFTMAX_CROSS_ENTROPY
from worker.problem.network import Network
from worker.problem.rates import METRICS, RATIOS


@dataclass(frozen=True)
class Examples:
    """Rows to report on.

    Attributes
    ----------
    features : scipy.sparse.csr_matrix, shape (n, d)
    labels : ndarray, shape (n,), or None
        As the loss takes them: +-1 class labels, real targets, or class indices 0..K-1
        (``multiclass``).
    classes : bool
        ``labels`` are +-1 class labels (errors and label-conditional rates exist).
    groups : dict of str to ndarray of bool, shape (n,)
    multiclass : bool
        ``labels`` are class indices of K scores.
    weights : ndarray, shape (n,), or None
        Non-negative example weights of the objective, the error and the rates (None:
        every row weighs 1).
    """

    features: sp.csr_matrix
    labels: np.ndarray | None
    classes: bool
    groups: dict[str, np.ndarray]
    multiclass: bool = False
    weights: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Rows."""
        return int(self.features.shape[0])


@dataclass(frozen=True)
class Deployed:
    """k solutions (k, P) deployed with probabilities ``weights`` (k,); a point has k = 1.
    ``network``: the one-score network the solutions parameterize (None: scores x.w)."""

    solutions: np.ndarray
    weights: np.ndarray
    network: Network | None = None

    @classmethod
    def point(cls, solution, network: Network | None = None) -> Deployed:
        """One solution (P,) deployed with probability 1."""
        return cls(np.asarray(solution, dtype=np.float64)[None, :], np.ones(1), network)

    def scores(self, examples: Examples) -> np.ndarray:
        """Every row's score under every member, shape (n, k), or (n, k, K) for K scores."""
        if self.network is None:
            return np.asarray(examples.features @ self.solutions.T)
        scores = np.stack([self.network.scores(theta, examples.features)
                           for theta in self.solutions], axis=1)
        return scores[:, :, 0] if self.network.outputs == 1 else scores


def loss_sums(loss: str, scores: np.ndarray, labels: np.ndarray,
              weights: np.ndarray | None = None) -> np.ndarray:
    """sum_i c_i loss(s_ij, y_i) of each member j, shape (k,), for scores (n, k) and example
    weights c (n,) (None: 1 each); for ``softmax_cross_entropy``, scores (n, k, K) and the
    loss log sum_c e^(s_c) - s_y."""
    if loss == SOFTMAX_CROSS_ENTROPY:
        rows = np.arange(scores.shape[0])
        members = [logsumexp(scores[:, j], axis=1) - scores[rows, j, labels.astype(np.int64)]
                   for j in range(scores.shape[1])]
    else:
        values = LOSSES[loss].reference_value
        members = [values(scores[:, j], labels) for j in range(scores.shape[1])]
    return np.array([_weighted_sum(member, weights) for member in members])


def regularized(l1: float, l2: float, deployed: Deployed, mean_losses: np.ndarray) -> float:
    """E_p[mean loss_j + l1 ||w_j||_1 + (l2/2) ||w_j||^2] over the members' mean losses
    (k,) (their :func:`loss_sums` over the examples' weight)."""
    solutions = deployed.solutions
    regularizer = l1 * np.abs(solutions).sum(axis=1) + 0.5 * l2 * (solutions ** 2).sum(axis=1)
    return float(deployed.weights @ (mean_losses + regularizer))


def error_sums(scores: np.ndarray, labels: np.ndarray,
               weights: np.ndarray | None = None) -> np.ndarray:
    """The weight c_i (None: 1) of the rows whose prediction disagrees with the label, summed
    for each member, shape (k,): 1[s > 0] against a +-1 label, or the class of the largest
    of K scores (n, k, K) against a class index."""
    if scores.ndim == 3:
        wrong = scores.argmax(axis=2) != labels[:, None]
    else:
        wrong = (scores > 0) != (labels > 0)[:, None]
    return wrong.sum(axis=0, dtype=np.float64) if weights is None else weights @ wrong


def _weighted_sum(values: np.ndarray, weights: np.ndarray | None) -> float:
    return float(values.sum() if weights is None else weights @ values)


def positive_probability(deployed: Deployed, scores: np.ndarray) -> np.ndarray:
    """P(positive prediction) of each row under the deployed distribution, shape (n,)."""
    return (scores > 0).astype(np.float64) @ deployed.weights


def _metric(metric: str) -> tuple[float | None, int]:
    """(label of the subset, indicator) of a mean metric; for a ratio metric (no label: it
    counts on the whole group) the indicator of its denominator."""
    return METRICS[metric] if metric in METRICS else (None, RATIOS[metric][1])


def rate_subset(metric: str, group: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    """The rows (bool mask (n,)) a ``metric`` counts on a group (mask (n,)): the group, and
    for a label-conditional metric its rows of that +-1 label."""
    label, _ = _metric(metric)
    return group if label is None else group & (labels == label)


def rate_indicator(metric: str, positive: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    """Each row's expected indicator (n,) of ``metric`` given P(positive) per row (n,):
    P(positive), P(negative) or, for ``error_rate``, P(prediction != label); for a ratio
    metric, its denominator's."""
    _, indicator = _metric(metric)
    if indicator == 1:
        return positive
    if indicator == -1:
        return 1.0 - positive
    return np.where(labels > 0, 1.0 - positive, positive)


def rate_sums(metric: str, subset: np.ndarray, indicator: np.ndarray,
              labels: np.ndarray | None, weights: np.ndarray | None) -> tuple[float, float]:
    """The rate's numerator and denominator on ``subset`` (mask (n,)) from each row's expected
    ``indicator`` (n,), weighted by ``weights`` (n,) (None: 1 each): sum c v and sum c for a
    mean metric; for a ratio N / D (:data:`worker.problem.rates.RATIOS`) the expected counts
    sum c v 1[y = label] and sum c v. Both add over disjoint rows (:func:`rate_of`)."""
    mass = np.ones(int(subset.sum())) if weights is None else weights[subset]
    counted = mass * indicator[subset]
    if metric in RATIOS:
        return float(counted @ (labels[subset] == RATIOS[metric][0])), float(counted.sum())
    return float(counted.sum()), float(mass.sum())


def rate_of(numerator: float, denominator: float) -> float | None:
    """A rate from its :func:`rate_sums`; None where the denominator is 0."""
    return float(numerator / denominator) if denominator > 0 else None


def row_values(rows: sp.csr_matrix, rhs: np.ndarray, deployed: Deployed) -> np.ndarray:
    """E_p[a_i . w - b_i] of each of m rows (m, d), shape (m,)."""
    return np.asarray(rows @ deployed.solutions.T) @ deployed.weights - rhs


def group_masks(members: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Group name -> rows (bool, (n,)) from each group's members (row indices)."""
    masks = {}
    for name, rows in members.items():
        masks[name] = np.zeros(n, dtype=bool)
        masks[name][rows] = True
    return masks
