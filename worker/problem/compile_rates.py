"""Spec rate constraints → :class:`~worker.problem.rates.RateSet`, with errors naming the JSON path.

Rates are counted on the objective's examples (``objective.data.groups`` names the groups)
or on a constraint's own ``data``. Refused with a :class:`~worker.errors.SpecError`:
an unknown group, an empty subset (e.g. a group without positive labels for a true positive
rate), label-conditional metrics without ±1 labels, a constraint that can never hold
whatever the predictions (e.g. ``true_positive_rate >= 1.2``: op and rhs do not match), and
rates on an objective without scored examples (quadratic, pairwise_hinge).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from worker.data.labels import checked_labels
from worker.errors import SpecError
from worker.losses import BY_CODE, CLASSES, PAIRWISE_HINGE, TARGETS
from worker.problem.compiled import QUADRATIC, Objective
from worker.problem.rates import (
    METRICS,
    RATIOS,
    RateSet,
    TrueRate,
    build_rate_set,
    rate_rows,
    ratio_rows,
)
from worker.problem.weights import example_weights
from worker.spec.models import EmpiricalRisk, RateConstraint, RateObjective, RateTerm, Spec

#: A constraint whose smallest possible value exceeds this can never hold.
IMPOSSIBLE_TOLERANCE = 1e-12


#: Label classes of :class:`GroupTotals`: every label, +1, -1.
LABEL_CLASSES = (None, 1.0, -1.0)


@dataclass(frozen=True)
class GroupTotals:
    """Every group's size and weight by label over the whole data, for rate constraints
    counted on one partition of it at a time (:mod:`worker.distributed.rate_parts`).

    Attributes
    ----------
    names : tuple of str
        The groups, in the order of ``table``'s rows.
    table : ndarray, shape (G + 1, 3, 2)
        [group, label class of :data:`LABEL_CLASSES`, (size, weight)]; row G counts every
        example (``group: null``).
    """

    names: tuple[str, ...]
    table: np.ndarray

    @classmethod
    def of(cls, names: tuple[str, ...], groups: dict[str, np.ndarray], n: int,
           labels: np.ndarray | None, weights: np.ndarray | None) -> GroupTotals:
        """The totals of ``n`` examples (one partition's): ``groups`` their member rows,
        ``labels`` (n,) or None, ``weights`` (n,) or None (every weight 1)."""
        weights = np.ones(n) if weights is None else weights
        table = np.zeros((len(names) + 1, len(LABEL_CLASSES), 2))
        for row, members in enumerate([groups[name] for name in names] + [np.arange(n)]):
            for column, label in enumerate(LABEL_CLASSES):
                chosen = members if label is None or labels is None else \
                    members[labels[members] == label]
                table[row, column] = chosen.size, weights[chosen].sum()
        return cls(names, table)

    def __add__(self, other: GroupTotals) -> GroupTotals:
        return GroupTotals(self.names, self.table + other.table)

    def subset(self, group: str | None, label: float | None) -> tuple[int, float]:
        """(size, weight) of the group's examples with ``label`` (None: any)."""
        size, weight = self.table[self._row(group), LABEL_CLASSES.index(label)]
        return int(size), float(weight)

    def labelled(self, group: str | None, label: float) -> tuple[int, float, float]:
        """(size, weight, weight of the examples labelled ``label``) of the group."""
        return (*self.subset(group, None), self.subset(group, label)[1])

    def _row(self, group: str | None) -> int:
        return len(self.names) if group is None else self.names.index(group)


@dataclass
class RateExamples:
    """One block of scored rows: features, ±1 labels (or None), groups, first row index;
    with ``totals``, the block is one partition of the data they count."""

    features: sp.csr_matrix
    labels: np.ndarray | None
    groups: dict[str, np.ndarray]
    offset: int
    groups_path: str
    weights: np.ndarray | None = None
    totals: GroupTotals | None = None


def compile_rates(spec: Spec, objective: Objective, source, d: int,
                  true_rate: TrueRate | None = None) -> RateSet | None:
    """The spec's rate constraints in order (None when there are none); with a rate
    objective (``true_rate``), those without their own data count on its examples."""
    blocks = rate_blocks(spec)
    if not blocks:
        return None
    datasets: list[RateExamples] = []
    shared: RateExamples | None = None
    pieces, constants = [], []
    for index, (k, constraint) in enumerate(blocks):
        path = f"constraints[{k}]"
        if constraint.data is None:
            if shared is None:
                shared = _objective_examples(spec, objective, source, path, _rows(datasets)) \
                    if true_rate is None else RateExamples(
                        true_rate.rate.features, true_rate.labels, true_rate.groups,
                        _rows(datasets), "objective.data.groups", true_rate.weights)
                datasets.append(shared)
            examples = shared
        else:
            examples = _own_examples(constraint, source, path, d, _rows(datasets))
            datasets.append(examples)
        constant = _constraint_rows(constraint, examples, path, index, pieces)
        constants.append(constant)
    features = sp.vstack([e.features for e in datasets], format="csr")
    rates = build_rate_set(features, pieces, np.array(constants))
    check_possible(rates.proxy.constant, [k for k, _ in blocks])
    return rates


def shared_rates(spec: Spec, examples: RateExamples) -> RateSet:
    """The spec's rate constraints, every one counted on the objective's examples, of which
    ``examples`` is one partition with the whole data's ``totals``
    (:mod:`worker.distributed.rate_parts`): the partition's share of each rate, with both
    forms' constants the constraints' own (not checked: :func:`check_possible` needs the
    sum over every partition), then, with a rate as the objective, its share as one more
    row (constant 0). Errors as :func:`compile_rates` and :func:`objective_rows`."""
    objective = spec.objective
    pieces, constants = [], []
    if isinstance(objective, RateObjective):
        counted = objective_rows(objective, examples)
    for index, (k, constraint) in enumerate(rate_blocks(spec)):
        if constraint.data is not None:
            raise SpecError.at(f"constraints[{k}].data", "rate constraints on examples read "
                               "in partitions count on the objective's examples; drop this "
                               "constraint's own data and give its groups in "
                               "objective.data.groups")
        constants.append(_constraint_rows(constraint, examples, f"constraints[{k}]", index,
                                          pieces))
    if isinstance(objective, RateObjective):
        pieces.append((len(constants), *counted))
        constants.append(0.0)
    return build_rate_set(examples.features, pieces, np.array(constants))


def objective_rows(objective: RateObjective, examples: RateExamples
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A rate objective over ``examples`` (the whole data, or one partition of it with the
    whole data's ``totals``) as :func:`~worker.problem.rates.rate_rows`' (rows, shares,
    signs) of its subset S.

    Raises
    ------
    SpecError
        At ``objective.group``: a group ``objective.data.groups`` does not define, or S
        empty or of weight 0 (at ``objective.data`` for ``group: null``).
    """
    term = RateTerm(metric=objective.metric, group=objective.group)
    members = _members(term, examples, "objective")
    totals = examples.totals
    try:
        return rate_rows(objective.metric, members, examples.labels, 1.0, examples.weights,
                         None if totals is None else totals.subset(
                             objective.group, METRICS[objective.metric][0]))
    except ValueError as error:
        name = "the data" if objective.group is None else f"group {objective.group!r}"
        raise SpecError.at("objective.group" if objective.group else "objective.data",
                           f"{name} {error}, so {objective.metric} is undefined there; "
                           "name another group or give examples it counts") from None


def rate_blocks(spec: Spec) -> list[tuple[int, RateConstraint]]:
    """The spec's rate constraints with their indices among its constraints."""
    return [(k, c) for k, c in enumerate(spec.constraints) if isinstance(c, RateConstraint)]


def _rows(datasets: list[RateExamples]) -> int:
    return sum(e.features.shape[0] for e in datasets)


def _constraint_rows(constraint: RateConstraint, examples: RateExamples, path: str, index: int,
                     pieces: list) -> float:
    """Append g's (index, rows, weights, signs) pieces; return its constant.
    g = lhs - rhs for ``<=``, rhs - lhs for ``>=`` (:meth:`RateConstraint.linear`)."""
    triples, constant = constraint.linear()
    totals = examples.totals
    for coefficient, term, where in triples:
        term_path = f"{path}.{where}"
        members = _members(term, examples, term_path)
        try:
            if term.metric in RATIOS:
                rows, weights, signs = ratio_rows(
                    term.metric, members, examples.labels, coefficient, constant,
                    examples.weights,
                    None if totals is None else totals.labelled(term.group,
                                                                RATIOS[term.metric][0]))
                constant = 0.0
            else:
                label = METRICS[term.metric][0]
                rows, weights, signs = rate_rows(
                    term.metric, members, examples.labels, coefficient, examples.weights,
                    None if totals is None else totals.subset(term.group, label))
        except ValueError as error:
            name = "the data" if term.group is None else f"group {term.group!r}"
            raise SpecError.at(term_path, f"{name} {error}, so {term.metric} is "
                               "undefined there; drop the term or name another group") from None
        pieces.append((index, rows + examples.offset, weights, signs))
    return constant


def _members(term: RateTerm, examples: RateExamples, path: str) -> np.ndarray:
    """The rows of the term's group (all rows for ``group: null``)."""
    label = METRICS[term.metric][0] if term.metric in METRICS else RATIOS[term.metric][0]
    if (label is not None or term.metric == "error_rate") and examples.labels is None:
        raise SpecError.at(f"{path}.metric", f"{term.metric} needs ±1 labels, and these "
                           "examples have none (or real-valued targets); use "
                           "positive_prediction_rate or give labels")
    if term.group is None:
        return np.arange(examples.features.shape[0])
    if term.group in examples.groups:
        return examples.groups[term.group]
    known = ", ".join(sorted(examples.groups)) or "none"
    every = " ('*' stands for every group only in the estimators' constraints)" \
        if term.group == "*" else ""
    raise SpecError.at(f"{path}.group", f"unknown group {term.group!r}{every}; "
                       f"{examples.groups_path} defines: {known}; name one of them or add "
                       "the group to the data")


def _objective_examples(spec: Spec, objective: Objective, source, path: str,
                        offset: int) -> RateExamples:
    obj = spec.objective
    if objective.kind == QUADRATIC or not isinstance(obj, EmpiricalRisk) \
            or obj.loss == PAIRWISE_HINGE:
        kind = "a quadratic objective" if objective.kind == QUADRATIC else \
            "a max_of objective (its terms have their own examples)" \
            if not isinstance(obj, EmpiricalRisk) else \
            "a pairwise_hinge objective (its rows are pairs)"
        raise SpecError.at(path, f"rate constraints count predictions on the objective's "
                           f"examples, and {kind} has no scored examples; give this "
                           "constraint its own 'data' (features, labels, groups)")
    labels = None if BY_CODE[objective.kind].labels is TARGETS else objective.labels
    groups = group_rows(obj.data.groups, objective.n, "objective.data.groups", source)
    return RateExamples(objective.features, labels, groups, offset, "objective.data.groups",
                     objective.weights)


def _own_examples(constraint: RateConstraint, source, path: str, d: int,
                  offset: int) -> RateExamples:
    data = constraint.data
    assert data is not None
    if data.labels is not None:
        features, labels = source.examples(data.features, data.labels, f"{path}.data")
        labels = checked_labels(labels, CLASSES, f"{path}.data.labels",
                                f"{path}.data.labels")
    else:
        features, labels = source.matrix(data.features, f"{path}.data.features"), None
    features = sp.csr_matrix(features, dtype=np.float64)
    if features.shape[1] != d:
        raise SpecError.at(f"{path}.data.features", f"{features.shape[1]} columns; the "
                           f"dimension is {d}")
    if labels is not None and labels.shape[0] != features.shape[0]:
        raise SpecError.at(f"{path}.data.labels", f"{labels.shape[0]} labels for "
                           f"{features.shape[0]} rows")
    groups = group_rows(data.groups, features.shape[0], f"{path}.data.groups", source)
    weights = example_weights(data.weights, features.shape[0], f"{path}.data.weights",
                              source)
    return RateExamples(features, labels, groups, offset, f"{path}.data.groups", weights)


def group_rows(values, n: int, path: str, source) -> dict[str, np.ndarray]:
    """Group name -> member rows, from 0/1 vectors of length n (``values``: the spec's
    ``groups`` at ``path``, or None)."""
    groups = {}
    for name, value in (values or {}).items():
        vector = source.vector(value, f"{path}.{name}")
        check_length(f"{path}.{name}", vector.shape[0], n)
        groups[name] = group_members(vector, f"{path}.{name}")
    return groups


def check_length(path: str, length: int, n: int) -> None:
    """Refuse a group column at ``path`` of another ``length`` than the ``n`` examples."""
    if length != n:
        raise SpecError.at(path, f"length {length}; give one 0/1 entry per example ({n})")


def group_members(vector: np.ndarray, path: str, offset: int = 0) -> np.ndarray:
    """The rows of a 0/1 group ``vector`` (k,) that are 1; another value is refused at
    ``path``, naming its row (``offset`` + its index: the vector is rows [offset, offset +
    k) of the group's)."""
    bad = np.flatnonzero(~np.isin(vector, (0.0, 1.0)))
    if bad.size:
        raise SpecError.at(f"{path}[{offset + int(bad[0])}]", "group membership is 0 or 1")
    return np.flatnonzero(vector)


def check_possible(least: np.ndarray, indices: list[int]) -> None:
    """Refuse a g whose least value over all predictions, ``least`` (m_r,), is > 0 (op and
    rhs mismatch); ``indices``: the constraints' places in the spec. The proxy form's
    constant is that least value: its weights are >= 0 and each example is in one
    indicator."""
    for k in np.flatnonzero(least > IMPOSSIBLE_TOLERANCE):
        raise SpecError.at(f"constraints[{indices[k]}]", "can never hold: even the best "
                           f"predictions leave it violated by {least[k]:.3g} (rates lie in "
                           "[0, 1]; check op and rhs)")
