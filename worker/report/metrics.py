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


def objective_value(loss: str, l1: float, l2: float, deployed: Deployed, scores: np.ndarray,
                    labels: np.ndarray, weights: np.ndarray | None = None) -> float:
    """E_p[sum_i c_i loss(s_i, y_i) / sum_i c_i + l1 ||w||_1 + (l2/2) ||w||^2] for scores
    (n, k) and example weights c (n,) (None: the mean loss); for ``softmax_cross_entropy``,
    scores (n, k, K) and log sum_c e^(s_c) - s_y."""
    if loss == SOFTMAX_CROSS_ENTROPY:
        rows = np.arange(scores.shape[0])
        per_member = np.array([np.average(logsumexp(scores[:, j], axis=1)
                                          - scores[rows, j, labels.astype(np.int64)],
                                          weights=weights)
                               for j in range(scores.shape[1])])
    else:
        values = LOSSES[loss].reference_value
        per_member = np.array([np.average(values(scores[:, j], labels), weights=weights)
                               for j in range(scores.shape[1])])
    solutions = deployed.solutions
    regularizer = l1 * np.abs(solutions).sum(axis=1) + 0.5 * l2 * (solutions ** 2).sum(axis=1)
    return float(deployed.weights @ (per_member + regularizer))


def error_value(deployed: Deployed, scores: np.ndarray, labels: np.ndarray,
                weights: np.ndarray | None = None) -> float:
    """E_p[share of rows whose prediction disagrees with the label, each row weighing c_i
    (None: 1)]: 1[s > 0] against a +-1 label, or the class of the largest of K scores
    (n, k, K) against a class index."""
    if scores.ndim == 3:
        wrong = scores.argmax(axis=2) != labels[:, None]
    else:
        wrong = (scores > 0) != (labels > 0)[:, None]
    return float(deployed.weights @ np.average(wrong, axis=0, weights=weights))


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


def rate_value(metric: str, subset: np.ndarray, indicator: np.ndarray,
               labels: np.ndarray | None, weights: np.ndarray | None) -> float | None:
    """The rate on ``subset`` (mask (n,)) from each row's expected ``indicator`` (n,),
    weighted by ``weights`` (n,) (None: 1 each): sum c v / sum c for a mean metric; for a
    ratio N / D (:data:`worker.problem.rates.RATIOS`) the expected counts' ratio
    sum c v 1[y = label] / sum c v. None where the denominator is 0."""
    mass = np.ones(int(subset.sum())) if weights is None else weights[subset]
    counted = mass * indicator[subset]
    if metric in RATIOS:
        numerator = counted @ (labels[subset] == RATIOS[metric][0])
        denominator = counted.sum()
    else:
        numerator, denominator = counted.sum(), mass.sum()
    return float(numerator / denominator) if denominator > 0 else None


def row_values(rows: sp.csr_matrix, rhs: np.ndarray, deployed: Deployed) -> np.ndarray:
    """E_p[a_i . w - b_i] of each of m rows (m, d), shape (m,)."""
    return np.asarray(rows @ deployed.solutions.T) @ deployed.weights - rhs
