"""What a deployed point's report is made of on one set of examples, as sums that add over
disjoint sets of rows: the objective's weighted loss and the error's weighted count per
member, the examples' weight, and each rate term's numerator, denominator, subset and group
sizes (:class:`Counts`). :func:`counts_of` takes them on rows held here; the report
(:func:`worker.report.evaluate.finished`) turns their total into its numbers, whether the
rows were counted in one block or partition by partition and added.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from worker.errors import SpecError
from worker.report.metrics import (
    Deployed,
    Examples,
    error_sums,
    loss_sums,
    positive_probability,
    rate_indicator,
    rate_subset,
    rate_sums,
)
from worker.spec.rates import PREDICTION_RATES, SIDES, RateConstraint, RateTerm, side_terms

#: A rate term with the index of its constraint in ``constraints`` (None: the objective).
Term = tuple[int | None, RateTerm]

#: Columns of :attr:`Counts.terms`.
NUMERATOR, DENOMINATOR, SUBSET, GROUP = range(4)


@dataclass(frozen=True)
class Counts:
    """Sums of one deployed point of k members over a set of examples.

    Attributes
    ----------
    examples : int
        Rows.
    mass : float
        Their weight (their count without weights).
    losses : ndarray, shape (k,), or None
        Each member's weighted sum of the objective's loss (None: no loss on these rows).
    wrong : ndarray, shape (k,), or None
        Each member's weight of misclassified rows (None: no class labels).
    terms : ndarray, shape (t, 4)
        Each rate term's :func:`~worker.report.metrics.rate_sums` (``NUMERATOR``,
        ``DENOMINATOR``) and the rows of its subset (``SUBSET``) and group (``GROUP``).
    """

    examples: int
    mass: float
    losses: np.ndarray | None
    wrong: np.ndarray | None
    terms: np.ndarray

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.examples + other.examples, self.mass + other.mass,
                      _added(self.losses, other.losses), _added(self.wrong, other.wrong),
                      self.terms + other.terms)


def _added(left: np.ndarray | None, right: np.ndarray | None) -> np.ndarray | None:
    return None if left is None else left + right


def side_terms_of(constraint: RateConstraint) -> list[tuple[str, RateTerm]]:
    """Every term of a rate constraint with its side, lhs first."""
    return [(name, term) for name in SIDES
            for _, term in side_terms(getattr(constraint, name), name)[0]]


def counts_of(loss: str | None, terms: list[Term], examples: Examples,
              deployed: Deployed, rows: list[tuple[np.ndarray, np.ndarray]] | None = None
              ) -> Counts:
    """``deployed``'s :class:`Counts` on ``examples``: of ``loss`` (None: none) and of each
    rate term in ``terms``; ``rows`` (optional) receives each term's subset (n,) and
    per-row expected indicator (n,), in order."""
    scores = deployed.scores(examples)
    labels, weights = examples.labels, examples.weights
    losses = None if loss is None or labels is None else \
        loss_sums(loss, scores, labels, weights)
    wrong = error_sums(scores, labels, weights) \
        if examples.classes or examples.multiclass else None
    positive = positive_probability(deployed, scores) if terms else None
    sums = np.zeros((len(terms), 4))
    for k, (index, term) in enumerate(terms):
        group = term_group(term, examples, index)
        subset = rate_subset(term.metric, group, labels)
        indicator = rate_indicator(term.metric, positive, labels)
        sums[k] = (*rate_sums(term.metric, subset, indicator, labels, weights),
                   subset.sum(), group.sum())
        if rows is not None:
            rows.append((subset, indicator))
    mass = float(examples.n if weights is None else weights.sum())
    return Counts(examples.n, mass, losses, wrong, sums)


def term_group(term: RateTerm, examples: Examples, index: int | None) -> np.ndarray:
    """The rows (bool, (n,)) of the term's group; every row for ``group: null``; ``index``:
    the term's constraint (None: the objective)."""
    where = "objective" if index is None else f"constraints[{index}]"
    if not examples.classes and term.metric not in PREDICTION_RATES:
        raise SpecError.at(where, f"{term.metric} needs +-1 labels; give class labels for "
                           "these data")
    if term.group is None:
        return np.ones(examples.n, dtype=bool)
    if term.group not in examples.groups:
        known = ", ".join(sorted(examples.groups)) or "none"
        raise SpecError.at(where, f"group {term.group!r} is not among the report's data "
                           f"groups ({known}); give it for these data")
    return examples.groups[term.group]
