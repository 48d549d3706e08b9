"""Problems whose scores come from a network: MLPs, K-class softmax models, robust objectives.

A :class:`NetworkProblem` is what :mod:`worker.algorithms.runners.network_games`, the candidates'
scores and :class:`worker.mixture.Mixture` consume: the :class:`Network` (its layer widths
and the flat parameter layout of :mod:`worker.kernels.network`), q objective
:class:`Term`\\ s (q = 1, or the terms of ``max_of``), rate constraints on the network's one
score, group-loss constraints (:class:`BoundedTerm`: a term's loss at most a bound), and a box
on the parameters.

Parameter layout (``solution`` in a Result, ``solution.npy``): for each layer l in order, W_l
of shape (n_l, n_{l+1}) row-major, then b_l (n_{l+1},) for an MLP; n_0 = d features,
n_L = K scores (1 for the binary losses). The linear model has one layer and no bias, so its
parameters are w, or W (d, K) row-major.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from worker.kernels.network import NetworkArrays, head_losses, network_scores
from worker.problem.csr import kernel_parts
from worker.problem.rates import RateSet

#: Rows per forward pass when scoring whole data sets.
SCORE_CHUNK = 4096


@dataclass(frozen=True)
class Network:
    """Layer widths (d, hidden..., K), biases or not; see the module docstring's layout.

    Attributes
    ----------
    sizes : tuple of int
        n_0 = d, ..., n_L = K.
    bias : bool
        Every layer has a bias (MLP) or none (linear).
    """

    sizes: tuple[int, ...]
    bias: bool

    @property
    def inputs(self) -> int:
        """d, the features of a row."""
        return self.sizes[0]

    @property
    def outputs(self) -> int:
        """K, the scores of a row."""
        return self.sizes[-1]

    def _offsets(self) -> tuple[np.ndarray, np.ndarray, int]:
        weight_at, bias_at, at = [], [], 0
        for n_in, n_out in zip(self.sizes[:-1], self.sizes[1:], strict=True):
            weight_at.append(at)
            at += n_in * n_out
            bias_at.append(at if self.bias else -1)
            at += n_out if self.bias else 0
        return np.array(weight_at, dtype=np.int64), np.array(bias_at, dtype=np.int64), at

    @property
    def parameters(self) -> int:
        """P, the length of theta."""
        return self._offsets()[2]

    def arrays(self) -> NetworkArrays:
        """The kernels' view of the layout."""
        weight_at, bias_at, _ = self._offsets()
        return NetworkArrays(np.array(self.sizes, dtype=np.int64), weight_at, bias_at)

    def initial(self, seed: int) -> np.ndarray:
        """theta(1), shape (P,): zeros for the linear model (a convex problem); for an MLP,
        weights uniform in +-sqrt(6 / n_l) into ReLU layers (He et al. 2015) and
        +-sqrt(6 / (n_l + n_{l+1})) into the scores (Glorot & Bengio 2010), biases 0, from
        numpy's PCG64 seeded with ``seed``."""
        theta = np.zeros(self.parameters)
        if not self.bias:
            return theta
        rng = np.random.default_rng(seed)
        weight_at, _, _ = self._offsets()
        layers = len(self.sizes) - 1
        for layer, at in enumerate(weight_at):
            n_in, n_out = self.sizes[layer], self.sizes[layer + 1]
            limit = math.sqrt(6.0 / (n_in if layer < layers - 1 else n_in + n_out))
            theta[at:at + n_in * n_out] = rng.uniform(-limit, limit, n_in * n_out)
        return theta

    def scores(self, theta: np.ndarray, features: sp.csr_matrix) -> np.ndarray:
        """Scores of every row of ``features`` (n, d) under theta (P,): shape (n, K)."""
        csr = kernel_parts(features)
        out = np.empty((features.shape[0], self.outputs))
        net = self.arrays()
        for start in range(0, features.shape[0], SCORE_CHUNK):
            rows = np.arange(start, min(start + SCORE_CHUNK, features.shape[0]))
            out[rows] = network_scores(net, theta, *csr, rows)
        return out



@dataclass(frozen=True)
class Term:
    """One empirical risk (1/n) sum_i c_i loss(f(x_i), y_i) + l1 ||theta||_1
    + (l2/2) ||theta||^2, with example weights c of mean 1 (all 1 without weights).

    Attributes
    ----------
    features : scipy.sparse.csr_matrix, shape (n, d)
    labels : ndarray, shape (n,)
        Class indices 0..K-1 (``code`` :data:`~worker.kernels.network.SOFTMAX`), or the
        binary loss's labels as its rule gives them to the kernels.
    code : int
        The head: SOFTMAX or a loss code of :mod:`worker.losses`.
    l1, l2 : float
    weights : ndarray, shape (n,), or None
        The example weights c divided by their mean
        (:func:`worker.problem.weights.mean_one`); None: every example weighs 1.
    """

    features: sp.csr_matrix
    labels: np.ndarray
    code: int
    l1: float = 0.0
    l2: float = 0.0
    weights: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of examples."""
        return int(self.features.shape[0])

    def example_weights(self) -> np.ndarray:
        """The weights c (n,) of mean 1: :attr:`weights`, or ones without weights."""
        return np.ones(self.n) if self.weights is None else self.weights

    def row_weights(self) -> np.ndarray:
        """The kernels' ``row_weights``: c (n,), or an empty array when every row weighs 1."""
        return np.zeros(0) if self.weights is None else self.weights

    def losses(self, network: Network, thetas: np.ndarray) -> np.ndarray:
        """The risk at each of T parameter vectors (T, P): shape (T,)."""
        rows = np.arange(self.n)
        values = np.empty(thetas.shape[0])
        for c, theta in enumerate(thetas):
            scores = network.scores(theta, self.features)
            total = head_losses(self.code, scores, self.labels, self.row_weights(), rows,
                                np.empty_like(scores), 1.0)
            values[c] = total / self.n + self.l1 * np.abs(theta).sum() \
                + 0.5 * self.l2 * float(theta @ theta)
        return values


@dataclass(frozen=True)
class BoundedTerm:
    """A group-loss constraint: ``term``'s mean loss (the group's rows, no regularizer) minus
    ``bound`` <= 0; ``index`` is its place in the spec's ``constraints``."""

    term: Term
    bound: float
    index: int


@dataclass(frozen=True)
class NetworkProblem:
    """min over theta in the box of L_1(theta), or of max_i L_i(theta) (``robust``), subject
    to rate constraints on the network's score and group-loss constraints.

    Attributes
    ----------
    network : Network
    terms : list of Term
        q >= 1 objective terms (q >= 2 when robust).
    robust : bool
    lower, upper : ndarray, shape (P,)
    rates : RateSet or None
        Counted on the scores f(x) (output 0); :meth:`RateSet.values` is for linear models,
        use :meth:`rate_values`.
    init_seed : int
    notes : list of str
    bounded : list of BoundedTerm
        The group-loss constraints, in spec order.
    """

    network: Network
    terms: list[Term]
    robust: bool
    lower: np.ndarray
    upper: np.ndarray
    rates: RateSet | None = None
    init_seed: int = 0
    notes: list[str] = field(default_factory=list)
    bounded: list[BoundedTerm] = field(default_factory=list)

    @property
    def d(self) -> int:
        """P, the number of parameters."""
        return self.network.parameters

    @property
    def m(self) -> int:
        """Rate constraints."""
        return 0 if self.rates is None else self.rates.m

    @property
    def m_total(self) -> int:
        """Constraints the games play: the rates, one slack constraint per robust term, then
        the group losses."""
        return self.m + (len(self.terms) if self.robust else 0) + len(self.bounded)

    @property
    def n(self) -> int:
        """Examples over every term."""
        return sum(term.n for term in self.terms)

    @property
    def examples(self) -> int:
        """The objective's examples, as ``Result.sizes`` reports them: :attr:`n`."""
        return self.n

    def term_losses(self, thetas: np.ndarray) -> np.ndarray:
        """L_i at each of T parameter vectors (T, P): shape (T, q)."""
        return np.column_stack([term.losses(self.network, thetas) for term in self.terms])

    def rate_values(self, thetas: np.ndarray) -> np.ndarray:
        """True rate constraint values g(theta), shape (T, m)."""
        if self.rates is None:
            return np.zeros((thetas.shape[0], 0))
        scores = np.column_stack([self.network.scores(theta, self.rates.features)[:, 0]
                                  for theta in thetas])
        return self.rates.proxy.values(scores)

    def bounded_values(self, thetas: np.ndarray) -> np.ndarray:
        """Group-loss constraint values L_G(theta) - bound, shape (T, m_g)."""
        if not self.bounded:
            return np.zeros((thetas.shape[0], 0))
        return np.column_stack([b.term.losses(self.network, thetas) - b.bound
                                for b in self.bounded])

    def constraint_values(self, thetas: np.ndarray) -> np.ndarray:
        """Every constraint's true value at T parameter vectors (T, P): the rates, then the
        group losses, shape (T, m + m_g)."""
        return np.hstack([self.rate_values(thetas), self.bounded_values(thetas)])

    def box_violation(self, theta: np.ndarray) -> float:
        """How far theta (P,) lies outside the box."""
        return max(float(np.max(self.lower - theta, initial=0.0)),
                   float(np.max(theta - self.upper, initial=0.0)), 0.0)
