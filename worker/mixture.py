"""Deploying a mixture: scoring new examples with the members of a Result.

A Result's ``mixture`` is a stochastic classifier (Cotter, Jiang, Sridharan 2019, §5
"Evaluation"): per example, draw a member with probability its weight and score with it.
Where a random model is not acceptable, §5 suggests deterministic conversions; two are
offered: the weight-averaged score (for a linear model, the mean solution's score; this is a
different classifier from the mixture, and no guarantee of the mixture holds for it) and the
Result's ``deterministic`` model (the best single candidate,
:mod:`worker.candidates.deterministic`; for a Result without one, the member of largest
weight). Only ``stochastic`` is the randomized classifier the guarantees are about.
Scores are x.w, or the Result's network (``model``) applied to x; with one score a
prediction is positive when it is > 0, with K scores it is the class of the largest. A
calibrated model's mixture (docs/tables.md) scores raw table rows through the Result's
fixed calibrators; extra columns are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from worker.errors import SpecError
from worker.model_types import MODEL_TYPES
from worker.model_types.record import Deployment
from worker.problem.network import Network
from worker.result import Result
from worker.tables.model import TableModel
from worker.tables.read import as_table

#: Ways to score with a mixture.
MODES = ("stochastic", "expected", "deterministic")


@dataclass(frozen=True)
class Mixture:
    """Members (k, P) and their weights (k,), nonnegative and summing to 1; the network the
    members parameterize (None: the linear model, P = d); the calibrated model whose
    features they score (None: features are given as a matrix)."""

    solutions: np.ndarray
    weights: np.ndarray
    network: Network | None = None
    table: TableModel | None = None
    #: the Result's deterministic model (P,); None: the member of largest weight
    deterministic: np.ndarray | None = None

    @classmethod
    def from_result(cls, result: Result | dict[str, Any]) -> Mixture:
        """The mixture of a Result (model or decoded JSON); it must carry the solutions."""
        model = result if isinstance(result, Result) else Result.model_validate(result)
        if not model.mixture or any(m.solution is None for m in model.mixture):
            raise SpecError.at("mixture", "the result carries no member solutions; solve "
                               "with output.mixture = true to deploy it")
        deployed = Deployment() if model.model is None else \
            MODEL_TYPES[model.model.type].deploy(model.model)
        single = model.deterministic
        return cls(np.array([m.solution for m in model.mixture], dtype=np.float64),
                   np.array([m.weight for m in model.mixture], dtype=np.float64),
                   deployed.network, deployed.rows,
                   None if single is None or single.solution is None
                   else np.array(single.solution, dtype=np.float64))

    @property
    def classes(self) -> int:
        """K, the scores per example (1: binary)."""
        return 1 if self.network is None else self.network.outputs

    def member_scores(self, features) -> np.ndarray:
        """Every example's scores under every member: shape (n, k), or (n, k, K) for K > 1.

        With a calibrated model, ``features`` may be a table of raw rows (pyarrow Table,
        pandas DataFrame or mapping of columns)."""
        return self._scores(features, self.solutions)

    def _scores(self, features, solutions: np.ndarray) -> np.ndarray:
        """Scores under each of ``solutions`` (k, P): (n, k), or (n, k, K) for K > 1."""
        if self.table is not None and not (isinstance(features, np.ndarray)
                                           or sp.issparse(features)):
            features = self.table.features(as_table(features))
        inputs = self.solutions.shape[1] if self.network is None else self.network.inputs
        if features.shape[1] != inputs:
            raise SpecError.at("features", f"{features.shape[1]} columns; the mixture's "
                               f"model takes {inputs}")
        if self.network is None:
            return np.asarray(features @ solutions.T)
        csr = sp.csr_matrix(features, dtype=np.float64)
        scores = np.stack([self.network.scores(theta, csr) for theta in solutions], axis=1)
        return scores[:, :, 0] if self.classes == 1 else scores

    def _chosen(self, scores: np.ndarray, mode: str, seed: int) -> np.ndarray:
        """Per example, the scores (n, ...) of the member ``mode`` picks (see :meth:`score`)."""
        if mode == "expected":
            return np.tensordot(scores, self.weights, axes=([1], [0]))
        if mode == "deterministic":
            return scores[:, int(np.argmax(self.weights))]
        if mode != "stochastic":
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        chosen = np.random.default_rng(seed).choice(self.weights.size, size=scores.shape[0],
                                                    p=self.weights / self.weights.sum())
        return scores[np.arange(scores.shape[0]), chosen]

    def score(self, features, mode: str = "stochastic", seed: int = 0) -> np.ndarray:
        """Scores (n,) of examples ``features`` (n, d), dense or sparse, or (n, K) with K
        scores.

        ``stochastic``: each example scored by a member drawn with probability its weight
        (numpy's PCG64 seeded with ``seed``, one draw per example in row order, so the same
        seed gives the same answer): the randomized classifier the guarantees are about;
        ``expected``: the weighted mean score (another classifier); ``deterministic``: the
        Result's deterministic model, or without one the member of largest weight (ties: the
        first).
        """
        if mode == "deterministic" and self.deterministic is not None:
            scores = self._scores(features, self.deterministic[None, :])
            return scores[:, 0]
        return self._chosen(self.member_scores(features), mode, seed)

    def predict(self, features, mode: str = "stochastic", seed: int = 0) -> np.ndarray:
        """Predictions (n,): 1/0 for positive/negative with one score, the class index of
        the largest score with K; members chosen as :meth:`score` does."""
        return predictions(self.score(features, mode, seed))

    def positive_probability(self, features) -> np.ndarray:
        """P(positive prediction) per example (n,) under the stochastic classifier."""
        return (self.member_scores(features) > 0).astype(np.float64) @ self.weights

    def error_rate(self, features, labels: np.ndarray) -> float:
        """The stochastic classifier's expected error on examples with ``labels`` (n,):
        +1/-1 (or 1/0) with one score, class indices with K."""
        scores = self.member_scores(features)
        labels = np.asarray(labels)
        if scores.ndim == 3:
            wrong = scores.argmax(axis=2) != labels[:, None]
        else:
            wrong = (scores > 0) != (labels > 0)[:, None]
        return float(wrong.mean(axis=0) @ self.weights)


def predictions(scores: np.ndarray) -> np.ndarray:
    """Scores (n,) -> 1/0 (positive when > 0); scores (n, K) -> the class of the largest."""
    return (scores > 0).astype(np.int64) if scores.ndim == 1 else scores.argmax(axis=1)
