"""A group-loss constraint in the report: the group's mean loss (weighted by the examples'
weights, when they have them) under a deployed point (a mixture in expectation over its
members) against the bound (docs/rates.md#group-losses)."""

from __future__ import annotations

import numpy as np

from worker.errors import SpecError
from worker.losses import CLASSES, LOSSES
from worker.report.metrics import Deployed, Examples
from worker.report.schema import ConstraintReport
from worker.spec.group_loss import GroupLossConstraint


def group_loss_report(index: int, constraint: GroupLossConstraint, examples: Examples | None,
                      deployed: Deployed, tolerance: float) -> ConstraintReport:
    """``constraints[index]`` on ``examples`` (None: counted on its own data, which these
    data are not, so undefined here): E_p[mean over the group of the loss, each example
    weighing its weight] - bound."""
    if examples is None:
        return _row(index, constraint, None, 0, tolerance)
    record = LOSSES[constraint.loss]
    if record.labels is CLASSES and not examples.classes:
        raise SpecError.at(f"constraints[{index}].loss", f"{constraint.loss} needs +-1 labels; "
                           "give class labels for these data")
    rows = _group(constraint, examples, index)
    weights = None if examples.weights is None else examples.weights[rows]
    if not rows.any() or (weights is not None and not weights.sum() > 0):
        return _row(index, constraint, None, 0, tolerance)
    scores = deployed.scores(examples)[rows]                          # (n_G, k)
    labels = examples.labels[rows]
    means = np.array([np.average(record.reference_value(scores[:, j], labels), weights=weights)
                      for j in range(scores.shape[1])])
    return _row(index, constraint, float(deployed.weights @ means), int(rows.sum()),
                tolerance)


def _row(index: int, constraint: GroupLossConstraint, value: float | None, examples: int,
         tolerance: float) -> ConstraintReport:
    worst = None if value is None else value - constraint.rhs
    return ConstraintReport(index=index, type="group_loss", rows=1,
                            violated=int(worst is not None and worst > tolerance), worst=worst,
                            op=constraint.op, bound=constraint.rhs, lhs=value,
                            rhs=constraint.rhs, difference=worst, loss=constraint.loss,
                            group=constraint.group, examples=examples)


def _group(constraint: GroupLossConstraint, examples: Examples, index: int) -> np.ndarray:
    """The group's rows (bool, (n,)); every row for ``group: null``."""
    if constraint.group is None:
        return np.ones(examples.n, dtype=bool)
    if constraint.group not in examples.groups:
        known = ", ".join(sorted(examples.groups)) or "none"
        raise SpecError.at(f"constraints[{index}]", f"group {constraint.group!r} is not among "
                           f"the report's data groups ({known}); give it for these data")
    return examples.groups[constraint.group]
