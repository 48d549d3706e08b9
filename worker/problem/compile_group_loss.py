"""Spec group-loss constraints → :class:`~worker.problem.network.BoundedTerm`\\ s, with errors
naming the JSON path (docs/rates.md#group-losses).

A constraint counts on the objective's examples (``objective.data``: its features, labels,
groups and weights) or on its own ``data``; the group's mean loss is weighted by the examples'
weights (every example weighs 1 without them). Refused with a
:class:`~worker.errors.SpecError`: a group the data do not define (``"*"`` stands for every
group only in the estimators' constraints), an empty group, a group whose examples all weigh
0, a ``max_of`` objective without the constraint's own data (its terms have their own
examples), and a label the loss does not take (e.g. a real target under a hinge loss), named
by its row in the data.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.data.labels import label_kind, label_problem
from worker.errors import SpecError
from worker.losses import LOSSES
from worker.problem.compile_rates import group_rows
from worker.problem.csr import as_csr
from worker.problem.network import BoundedTerm, Term
from worker.problem.weights import example_weights, mean_one
from worker.spec.group_loss import GroupLossConstraint
from worker.spec.models import MaxOf, Spec

#: (features (n, d), raw labels (n,), groups name -> rows, the labels' path, the groups' path,
#: example weights (n,) or None)
Examples = tuple[sp.csr_matrix, np.ndarray, dict[str, np.ndarray], str, str, np.ndarray | None]


def compile_group_losses(spec: Spec, objective: tuple[sp.csr_matrix, np.ndarray,
                                                      np.ndarray | None], source,
                         d: int) -> list[BoundedTerm]:
    """Every group-loss constraint of ``spec`` in order, on ``objective``'s examples (the
    first term's features (n, d), raw labels (n,) and example weights (n,) or None) or its
    own data."""
    bounded, shared = [], None
    for k, constraint in enumerate(spec.constraints):
        if not isinstance(constraint, GroupLossConstraint):
            continue
        path = f"constraints[{k}]"
        if constraint.data is not None:
            examples = _own_examples(constraint, source, path, d)
        else:
            if shared is None:
                shared = _objective_examples(spec, objective, source, path)
            examples = shared
        bounded.append(BoundedTerm(_term(constraint, examples, path), constraint.rhs, k))
    return bounded


def _term(constraint: GroupLossConstraint, examples: Examples, path: str) -> Term:
    """The group's rows under the constraint's loss, labels checked by its rule."""
    features, labels, groups, labels_path, groups_path, weights = examples
    if constraint.group is None:
        rows = np.arange(features.shape[0])
    elif constraint.group in groups:
        rows = groups[constraint.group]
    else:
        known = ", ".join(sorted(groups)) or "none"
        every = " ('*' stands for every group only in the estimators' constraints)" \
            if constraint.group == "*" else ""
        raise SpecError.at(f"{path}.group", f"unknown group {constraint.group!r}{every}; "
                           f"{groups_path} defines: {known}; name one of them or add the "
                           "group to the data")
    if rows.size == 0:
        raise SpecError.at(f"{path}.group", f"group {constraint.group!r} has no examples, so "
                           "its mean loss is undefined; drop the constraint or name another "
                           "group")
    if weights is not None and not weights[rows].sum() > 0:
        raise SpecError.at(f"{path}.group", f"every example of group {constraint.group!r} "
                           "weighs 0, so its mean loss is undefined; give some of them a "
                           "positive weight or name another group")
    rule = label_kind(constraint.loss)
    problem = label_problem(labels[rows], rule, labels_path, labels_path)
    if problem is not None:
        row = int(rows[problem[0]])
        raise SpecError.at(f"{path}.loss", f"{constraint.loss} takes {rule.sentence}, and "
                           f"{labels_path}[{row}] is {float(labels[row])!r}; choose a loss "
                           "these labels fit (squared for real targets) or give the "
                           "constraint its own data")
    return Term(sp.csr_matrix(features[rows]), rule.signed(labels[rows]),
                LOSSES[constraint.loss].code,
                weights=None if weights is None else mean_one(weights[rows]))


def _objective_examples(spec: Spec, objective: tuple[sp.csr_matrix, np.ndarray,
                                                     np.ndarray | None], source,
                        path: str) -> Examples:
    if isinstance(spec.objective, MaxOf):
        raise SpecError.at(path, "a group loss counts on the objective's examples, and a "
                           "max_of objective's terms have their own; give this constraint "
                           "its own 'data' (features, labels, groups)")
    features, labels, weights = objective
    groups = group_rows(spec.objective.data.groups, features.shape[0],
                        "objective.data.groups", source)
    return features, labels, groups, "objective.data.labels", "objective.data.groups", weights


def _own_examples(constraint: GroupLossConstraint, source, path: str, d: int) -> Examples:
    data = constraint.data
    assert data is not None
    features, labels = source.examples(data.features, data.labels, f"{path}.data")
    features = as_csr(features)
    if features.shape[1] != d:
        raise SpecError.at(f"{path}.data.features", f"{features.shape[1]} columns; the "
                           f"objective's data have {d}")
    if labels.shape[0] != features.shape[0]:
        raise SpecError.at(f"{path}.data.labels", f"{labels.shape[0]} labels for "
                           f"{features.shape[0]} rows; give one label per row")
    groups = group_rows(data.groups, features.shape[0], f"{path}.data.groups", source)
    weights = example_weights(data.weights, features.shape[0], f"{path}.data.weights", source)
    return features, labels, groups, f"{path}.data.labels", f"{path}.data.groups", weights

