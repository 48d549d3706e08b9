"""Deploying a mixture: scoring new examples with the members of a Result.

A Result's ``mixture`` is a stochastic classifier (Cotter, Jiang, Sridharan 2019, §5
"Evaluation"): per example, draw a member with probability its weight and score with it.
Where a random model is not acceptable, §5 suggests deterministic conversions; two are
offered: the weight-averaged score (for a linear model, the mean solution's score) and the
member of largest weight. Scores are x.w; a prediction is positive when the score is > 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from worker.errors import SpecError
from worker.result import Result

#: Ways to score with a mixture.
MODES = ("stochastic", "expected", "deterministic")


@dataclass(frozen=True)
class Mixture:
    """Members (k, d) and their weights (k,), nonnegative and summing to 1."""

    solutions: np.ndarray
    weights: np.ndarray

    @classmethod
    def from_result(cls, result: Result | dict[str, Any]) -> Mixture:
        """The mixture of a Result (model or decoded JSON); it must carry the solutions."""
        model = result if isinstance(result, Result) else Result.model_validate(result)
        if not model.mixture or any(m.solution is None for m in model.mixture):
            raise SpecError.at("mixture", "the result carries no member solutions; solve "
                               "with output.mixture = true to deploy it")
        return cls(np.array([m.solution for m in model.mixture], dtype=np.float64),
                   np.array([m.weight for m in model.mixture], dtype=np.float64))

    def member_scores(self, features) -> np.ndarray:
        """x.w of every example under every member, shape (n, k)."""
        if features.shape[1] != self.solutions.shape[1]:
            raise SpecError.at("features", f"{features.shape[1]} columns; the mixture's "
                               f"solutions have {self.solutions.shape[1]}")
        return np.asarray(features @ self.solutions.T)

    def score(self, features, mode: str = "stochastic", seed: int = 0) -> np.ndarray:
        """Scores (n,) of examples ``features`` (n, d), dense or sparse.

        ``stochastic``: each example scored by a member drawn with probability its weight
        (numpy's PCG64 seeded with ``seed``, one draw per example in row order, so the same
        seed gives the same answer); ``expected``: the weighted mean score; ``deterministic``:
        the member of largest weight (ties: the first).
        """
        scores = self.member_scores(features)
        if mode == "expected":
            return scores @ self.weights
        if mode == "deterministic":
            return scores[:, int(np.argmax(self.weights))]
        if mode != "stochastic":
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        chosen = np.random.default_rng(seed).choice(self.weights.size, size=scores.shape[0],
                                                    p=self.weights / self.weights.sum())
        return scores[np.arange(scores.shape[0]), chosen]

    def positive_probability(self, features) -> np.ndarray:
        """P(positive prediction) per example (n,) under the stochastic classifier."""
        return (self.member_scores(features) > 0).astype(np.float64) @ self.weights
