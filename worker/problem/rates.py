"""Rate constraints (Cotter, Jiang, Sridharan 2019, §1.2 and §6.2), compiled.

A prediction is positive when the score s = x.w is > 0. Every rate is a mean of indicators
over a subset S of examples (a group, intersected with a label for the label-conditional
metrics), and a rate constraint is linear in rates, so it is a :class:`RateForm`

    g_k(w) = constant_k + sum_i plus[k, i] 1[s_i > 0] + sum_i minus[k, i] 1[s_i <= 0] <= 0

with denominators |S| from the full data (a uniform minibatch estimate of the sums, scaled
by n / B, is then unbiased; TFCO divides by the minibatch's own counts, which is biased).
Replacing each indicator by an upper bound gives the form's *surrogate*: the ``hinge`` bound
1[s > 0] <= max(0, 1 + s), 1[s <= 0] <= max(0, 1 - s) (convex, the paper's §6.2 choice), or
the ``ramp`` bound min(1, max(0, 1 + s)), min(1, max(0, 1 - s)) (non-convex; equal to the
indicator for |s| >= 1, so one example far on either side counts once, not by its distance).
Two forms of the same g are kept:

* ``proxy``: rewritten so that every weight is >= 0 (a negative weight on 1[s > 0] becomes a
  positive one on 1[s <= 0] plus a constant), so the surrogate is an upper bound g~ >= g, as
  Definition 2 requires of proxy constraints. The lambda-player of the proxy-Lagrangian sees
  the true g, the theta-player differentiates g~.
* ``relaxed``: the terms as written, each indicator replaced by its upper bound (§6.2:
  "the indicator functions ... replaced with hinge upper bounds"); not a bound of g where a
  rate has a negative coefficient, but feasible where the proxy's upper bound is not (for
  TPR(male) >= 0.95 TPR(all) with 85% of positives male, g~ > 0 for every w). The
  Lagrangian plays the game on these relaxed constraints.

A ratio constraint "TPR(female) >= 0.95 TPR(all)" is g = 0.95 TPR(all) - TPR(female) <= 0.
A ratio of counts against a constant (precision(G) >= c) is its exact linear form in the
counts, c PP(G) - TP(G) <= 0, divided by the group's size (:func:`ratio_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: Upper bounds of an indicator that the theta-player can differentiate (module docstring).
PROXIES = ("hinge", "ramp")
#: Scores of a block of points evaluated at once (:meth:`RateSet.values`): 128 MiB.
SCORE_BLOCK = 2**24

#: metric -> (label of the subset or None for all labels, indicator: +1 positive prediction,
#: -1 negative prediction, 0 wrong prediction).
METRICS = {
    "positive_prediction_rate": (None, 1), "negative_prediction_rate": (None, -1),
    "true_positive_rate": (1.0, 1), "false_negative_rate": (1.0, -1),
    "false_positive_rate": (-1.0, 1), "true_negative_rate": (-1.0, -1),
    "error_rate": (None, 0),
}
#: ratio metric -> (label counted in the numerator, indicator of the numerator and the
#: denominator: +1 positive predictions, -1 negative ones). precision = TP / PP, false
#: discovery rate = FP / PP, false omission rate = FN / PN.
RATIOS = {"precision": (1.0, 1), "false_discovery_rate": (-1.0, 1),
          "false_omission_rate": (1.0, -1)}


@dataclass(frozen=True)
class RateForm:
    """g = constant + plus @ 1[s > 0] + minus @ 1[s <= 0], for scores s of shape (n_r,).

    Attributes
    ----------
    constant : ndarray, shape (m_r,)
    plus, minus : scipy.sparse.csr_matrix, shape (m_r, n_r)
    """

    constant: np.ndarray
    plus: sp.csr_matrix
    minus: sp.csr_matrix

    def _combine(self, positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
        values = self.plus @ positive + self.minus @ negative
        return (values.T + self.constant) if values.ndim == 2 else values + self.constant

    def values(self, scores: np.ndarray) -> np.ndarray:
        """g for scores (n_r,) -> (m_r,), or (n_r, T) -> (T, m_r)."""
        positive = (scores > 0).astype(np.float64)
        return self._combine(positive, 1.0 - positive)

    def surrogate(self, scores: np.ndarray, proxy: str = "hinge") -> np.ndarray:
        """g with every indicator replaced by its ``proxy`` upper bound (one of
        :data:`PROXIES`); shapes as :meth:`values`."""
        return self._combine(indicator_bound(scores, proxy), indicator_bound(-scores, proxy))


def indicator_bound(z: np.ndarray, proxy: str) -> np.ndarray:
    """An upper bound of 1[z > 0] (and of 1[z >= 0]): max(0, 1 + z) for ``"hinge"``,
    clipped at 1 for ``"ramp"``; elementwise, any shape."""
    bound = np.maximum(0.0, 1.0 + z)
    return bound if proxy == "hinge" else np.minimum(bound, 1.0)


@dataclass(frozen=True)
class RateSet:
    """m_r rate constraints over n_r scored examples, in their two forms.

    Attributes
    ----------
    features : scipy.sparse.csr_matrix, shape (n_r, d)
        The examples whose scores the rates count (the objective's rows, possibly followed by
        rate constraints' own data).
    proxy : RateForm
        Nonnegative weights: surrogate >= g (the proxy-Lagrangian's g~).
    relaxed : RateForm
        The terms as written (the Lagrangian's hinge relaxation, §6.2).
    """

    features: sp.csr_matrix
    proxy: RateForm
    relaxed: RateForm

    @property
    def m(self) -> int:
        """Number of rate constraints."""
        return int(self.proxy.constant.shape[0])

    def _blocked(self, w: np.ndarray, form: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``form`` of the scores: (m_r,) for w (d,); (T, m_r) for w (T, d), the points
        taken in blocks whose scores hold at most
        :data:`~worker.problem.rates.SCORE_BLOCK` entries (the dense
        (n_r, T) scores of every point at once, and the indicators made of them, would
        hold several times the examples' memory)."""
        if w.ndim == 1:
            return form(self.features @ w)
        step = max(1, SCORE_BLOCK // max(self.features.shape[0], 1))
        blocks = [form(self.features @ w[k:k + step].T) for k in range(0, w.shape[0], step)]
        return np.vstack(blocks) if blocks else np.zeros((0, self.m))

    def values(self, w: np.ndarray) -> np.ndarray:
        """True (indicator) g(w): shape (m_r,) for w (d,), (T, m_r) for w (T, d)."""
        return self._blocked(w, self.proxy.values)

    def proxy_values(self, w: np.ndarray, proxy: str = "hinge") -> np.ndarray:
        """Proxy constraints g~(w) >= g(w) with the ``proxy`` bound, shapes as :meth:`values`."""
        return self._blocked(w, lambda scores: self.proxy.surrogate(scores, proxy))

    def relaxed_values(self, w: np.ndarray, proxy: str = "hinge") -> np.ndarray:
        """The Lagrangian's relaxed constraints with the ``proxy`` bound, shapes as
        :meth:`values`."""
        return self._blocked(w, lambda scores: self.relaxed.surrogate(scores, proxy))


def rate_rows(metric: str, members: np.ndarray, labels: np.ndarray | None,
              coefficient: float, weights: np.ndarray | None = None,
              subset: tuple[int, float] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``coefficient * metric`` over ``members`` as (rows, weights, signs) of one g.

    Parameters
    ----------
    metric : str
        A key of :data:`METRICS`.
    members : ndarray of int, shape (k,)
        Rows of the group (all rows for ``group: null``).
    labels : ndarray, shape (n_r,), or None
        ±1 labels (needed by every metric but the prediction rates).
    coefficient : float
    weights : ndarray, shape (n_r,), or None
        Non-negative example weights (None: every example weighs 1); the rate is the
        weighted mean sum_S c_i 1[...] / sum_S c_i.
    subset : (int, float), optional
        S's size and weight over the whole data when these rows are one partition of it
        (:mod:`worker.distributed.rate_parts`); default: these rows are the whole data.

    Returns
    -------
    rows, weights, signs : ndarray, shape (|S|,)
        The subset S, the weight coefficient c_i / sum_S c of each row's indicator, and
        which indicator: +1 for 1[s > 0], -1 for 1[s <= 0].

    Raises
    ------
    ValueError
        S is empty or weighs 0 (the message says which subset).
    """
    label, indicator = METRICS[metric]
    rows = members if label is None else members[labels[members] == label]
    mass = _example_weights(rows, weights)
    size, total = (rows.size, mass.sum()) if subset is None else subset
    if total <= 0:
        subset_name = "examples" if label is None else f"examples labelled {label:+.0f}"
        raise ValueError(f"has no {subset_name}" if size == 0 else
                         f"has no {subset_name} of positive weight")
    # error_rate: a positive prediction of a -1, a negative prediction of a +1
    signs = -labels[rows] if indicator == 0 else np.full(rows.size, float(indicator))
    return rows, coefficient * mass / total, signs


def ratio_rows(metric: str, members: np.ndarray, labels: np.ndarray, coefficient: float,
               constant: float, weights: np.ndarray | None = None,
               group: tuple[int, float, float] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """g = coefficient * ratio + constant <= 0 for a ratio ``metric`` = N / D of
    :data:`RATIOS`, as the exact linear form in counts (D > 0):

        g <= 0  <=>  (coefficient N + constant D) / W_G <= 0,

    N and D the (weighted) counts over the group's rows, W_G the group's weight (a fixed
    positive normalizer). For precision >= c this is c PP(G) - TP(G) <= 0. Returns
    (rows, weights, signs) as :func:`rate_rows`; the form's constant is 0. ``group``: the
    group's size, weight and weight of the numerator's label over the whole data when
    ``members`` are one partition's (default: these rows are the whole data).

    Raises
    ------
    ValueError
        The group is empty, or has no example of the numerator's label (the ratio is then 0
        wherever it is defined).
    """
    label, indicator = RATIOS[metric]
    mass = _example_weights(members, weights)
    counted = labels[members] == label
    size, total, labelled = (members.size, mass.sum(), (mass * counted).sum()) \
        if group is None else group
    if total <= 0:
        raise ValueError("has no examples" if size == 0 else
                         "has no examples of positive weight")
    if not labelled > 0:
        raise ValueError(f"has no examples labelled {label:+.0f}, so its {metric} is 0 "
                         "wherever it is defined")
    values = mass * (coefficient * counted + constant) / total
    return members, values, np.full(members.size, float(indicator))


def _example_weights(rows: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Each row's weight (1 without weights), shape (|rows|,)."""
    return np.ones(rows.size) if weights is None else weights[rows]


def build_rate_set(features: sp.csr_matrix, pieces: list[tuple[int, np.ndarray, np.ndarray,
                                                                np.ndarray]],
                   constant: np.ndarray) -> RateSet:
    """A RateSet from (constraint, rows, weights, signs) pieces and the constants (m_r,)."""
    m, n = constant.shape[0], features.shape[0]

    def matrix(sign: float) -> sp.csr_matrix:
        chosen = [(k, r[s == sign], w[s == sign]) for k, r, w, s in pieces]
        k = np.concatenate([np.full(r.size, c) for c, r, _ in chosen] or [np.zeros(0, int)])
        i = np.concatenate([r for _, r, _ in chosen] or [np.zeros(0, int)])
        v = np.concatenate([w for _, _, w in chosen] or [np.zeros(0)])
        out = sp.csr_matrix((v, (k, i)), shape=(m, n))
        out.sum_duplicates()
        out.eliminate_zeros()
        return out

    plus, minus = matrix(1.0), matrix(-1.0)
    relaxed = RateForm(constant, plus, minus)
    net = plus - minus  # g = constant + minus @ 1 + net @ 1[s > 0]
    shifted = constant + np.asarray(minus.sum(axis=1)).ravel()
    below = net.minimum(0.0)  # w z = w - w (1 - z) for w < 0
    proxy = RateForm(shifted + np.asarray(below.sum(axis=1)).ravel(),
                     sp.csr_matrix(net.maximum(0.0)), sp.csr_matrix(-below))
    return RateSet(features=sp.csr_matrix(features), proxy=proxy, relaxed=relaxed)


@dataclass(frozen=True)
class TrueRate:
    """A rate as the objective, scored true (0/1 indicators), with the examples it counts on,
    which the spec's rate constraints without their own data share.

    Attributes
    ----------
    rate : RateSet
        One row (m_r = 1, constant 0): the rate over ``rate.features`` (n_o, d).
    labels : ndarray, shape (n_o,), or None
        ±1 labels (None: the rate is a prediction rate and no labels were given).
    groups : dict of str to ndarray of int
        Each named group's rows.
    weights : ndarray, shape (n_o,), or None
        The examples' weights (None: every example weighs 1), which the rate and the rate
        constraints counted on these examples weigh.
    """

    rate: RateSet
    labels: np.ndarray | None
    groups: dict[str, np.ndarray]
    weights: np.ndarray | None = None

    def values(self, points: np.ndarray) -> np.ndarray:
        """The true rate at each point: (K, d) -> (K,)."""
        return self.rate.values(np.atleast_2d(points))[:, 0]
