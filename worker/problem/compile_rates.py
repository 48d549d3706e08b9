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
from worker.spec.models import EmpiricalRisk, RateConstraint, RateTerm, Spec

#: A constraint whose smallest possible value exceeds this can never hold.
IMPOSSIBLE_TOLERANCE = 1e-12


@dataclass
class _Examples:
    """One block of scored rows: features, ±1 labels (or None), groups, first row index."""

    features: sp.csr_matrix
    labels: np.ndarray | None
    groups: dict[str, np.ndarray]
    offset: int
    groups_path: str
    weights: np.ndarray | None = None


def compile_rates(spec: Spec, objective: Objective, source, d: int,
                  true_rate: TrueRate | None = None) -> RateSet | None:
    """The spec's rate constraints in order (None when there are none); with a rate
    objective (``true_rate``), those without their own data count on its examples."""
    blocks = [(k, c) for k, c in enumerate(spec.constraints) if isinstance(c, RateConstraint)]
    if not blocks:
        return None
    datasets: list[_Examples] = []
    shared: _Examples | None = None
    pieces, constants = [], []
    for index, (k, constraint) in enumerate(blocks):
        path = f"constraints[{k}]"
        if constraint.data is None:
            if shared is None:
                shared = _objective_examples(spec, objective, source, path, _rows(datasets)) \
                    if true_rate is None else _Examples(
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
    _check_possible(rates, [k for k, _ in blocks])
    return rates


def _rows(datasets: list[_Examples]) -> int:
    return sum(e.features.shape[0] for e in datasets)


def _constraint_rows(constraint: RateConstraint, examples: _Examples, path: str, index: int,
                     pieces: list) -> float:
    """Append g's (index, rows, weights, signs) pieces; return its constant.
    g = lhs - rhs for ``<=``, rhs - lhs for ``>=`` (:meth:`RateConstraint.linear`)."""
    triples, constant = constraint.linear()
    for coefficient, term, where in triples:
        term_path = f"{path}.{where}"
        members = _members(term, examples, term_path)
        try:
            if term.metric in RATIOS:
                rows, weights, signs = ratio_rows(term.metric, members, examples.labels,
                                                  coefficient, constant, examples.weights)
                constant = 0.0
            else:
                rows, weights, signs = rate_rows(term.metric, members, examples.labels,
                                                 coefficient, examples.weights)
        except ValueError as error:
            name = "the data" if term.group is None else f"group {term.group!r}"
            raise SpecError.at(term_path, f"{name} {error}, so {term.metric} is "
                               "undefined there; drop the term or name another group") from None
        pieces.append((index, rows + examples.offset, weights, signs))
    return constant


def _members(term: RateTerm, examples: _Examples, path: str) -> np.ndarray:
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
                        offset: int) -> _Examples:
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
    return _Examples(objective.features, labels, groups, offset, "objective.data.groups",
                     objective.weights)


def _own_examples(constraint: RateConstraint, source, path: str, d: int,
                  offset: int) -> _Examples:
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
    return _Examples(features, labels, groups, offset, f"{path}.data.groups", weights)


def group_rows(values, n: int, path: str, source) -> dict[str, np.ndarray]:
    """Group name -> member rows, from 0/1 vectors of length n (``values``: the spec's
    ``groups`` at ``path``, or None)."""
    groups = {}
    for name, value in (values or {}).items():
        vector = source.vector(value, f"{path}.{name}")
        if vector.shape[0] != n:
            raise SpecError.at(f"{path}.{name}", f"length {vector.shape[0]}; give one 0/1 "
                               f"entry per example ({n})")
        bad = np.flatnonzero(~np.isin(vector, (0.0, 1.0)))
        if bad.size:
            raise SpecError.at(f"{path}.{name}[{int(bad[0])}]", "group membership is 0 or 1")
        groups[name] = np.flatnonzero(vector)
    return groups


def _check_possible(rates: RateSet, indices: list[int]) -> None:
    """Refuse a g whose least value over all predictions is > 0 (op and rhs mismatch)."""
    least = rates.proxy.constant  # its weights are >= 0 and each example in one indicator
    for k in np.flatnonzero(least > IMPOSSIBLE_TOLERANCE):
        raise SpecError.at(f"constraints[{indices[k]}]", "can never hold: even the best "
                           f"predictions leave it violated by {least[k]:.3g} (rates lie in "
                           "[0, 1]; check op and rhs)")
