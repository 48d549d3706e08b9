"""The losses' rule for labels, shared by compiling a problem in this process
(:mod:`worker.problem.compile`) and by reading it partition by partition
(:mod:`worker.distributed.partitions`).

Labels must be finite, and each loss's :class:`~worker.losses.LabelRule` says which finite
labels it takes (class labels +1/-1, or 1/0 with 0 meaning -1, for hinge, logistic and
squared hinge; any real target for squared) and how the kernels receive them. A partition
finds its first bad label before it knows its offset in the file, so the check returns the
problem with the row left open (:func:`label_problem`), and the caller raises it once the
global row is known (:func:`raise_problem`).
"""

from __future__ import annotations

import numpy as np

from worker.errors import DataError, SpecError
from worker.losses import LOSSES, LabelRule

#: Where the labels are in a spec.
LABELS = "objective.data.labels"

#: (local row, error class "data" or "spec", path, message); path and message hold ``{row}``.
LabelProblem = tuple[int, str, str, str]


def label_problem(labels: np.ndarray, rule: LabelRule, path: str,
                  labels_path: str = LABELS) -> LabelProblem | None:
    """The first label refused (labels shape (n,)): not finite, or not accepted by ``rule``.

    ``path`` names where non-finite values were read; a label the rule refuses is named as
    ``labels_path[row]``.
    """
    bad = np.flatnonzero(~np.isfinite(labels))
    if bad.size:
        i = int(bad[0])
        return (i, "data", path, f"the label of row {{row}} is {labels[i]}; every value must "
                                 f"be finite: replace or drop NaN and infinite entries")
    bad = np.flatnonzero(~rule.accepts(labels))
    if bad.size:
        i = int(bad[0])
        return (i, "spec", f"{labels_path}[{{row}}]", f"{float(labels[i])!r} is not "
                f"{rule.noun}; give {rule.sentence}")
    return None


def raise_problem(problem: LabelProblem, row: int) -> None:
    """Raise ``problem`` as the error naming ``row``."""
    _, kind, path, message = problem
    path, message = path.format(row=row), message.format(row=row)
    raise DataError(path, message) if kind == "data" else SpecError.at(path, message)


def signed_labels(labels: np.ndarray, rule: LabelRule) -> np.ndarray:
    """Checked labels (n,) as the kernels take them (class labels: 0 read as -1)."""
    return rule.signed(labels)


def checked_labels(labels: np.ndarray, rule: LabelRule, path: str,
                   labels_path: str = LABELS) -> np.ndarray:
    """Labels (n,) checked against ``rule`` and signed, or the error naming the first bad row."""
    problem = label_problem(labels, rule, path, labels_path)
    if problem is not None:
        raise_problem(problem, problem[0])
    return signed_labels(labels, rule)


def label_kind(loss: str) -> LabelRule:
    """The :class:`~worker.losses.LabelRule` of a registered loss name."""
    return LOSSES[loss].labels
