"""The losses' rule for labels, shared by compiling a problem in this process
(:mod:`worker.problem.compile`) and by reading it partition by partition
(:mod:`worker.distributed.partitions`).

Labels must be finite; the class-label losses of :mod:`worker.losses` (hinge, logistic,
squared hinge) take +1/-1, or 1/0 with 0 meaning -1; the others take any real target.
A partition finds its first bad label before it knows its offset in the file, so the check
returns the problem with the row left open (:func:`label_problem`), and the caller raises it
once the global row is known (:func:`raise_problem`).
"""

from __future__ import annotations

import numpy as np

from worker.errors import DataError, SpecError
from worker.losses import CLASSES, LOSSES

#: Where the labels are in a spec.
LABELS = "objective.data.labels"

#: (local row, error class "data" or "spec", path, message); path and message hold ``{row}``.
LabelProblem = tuple[int, str, str, str]


def label_problem(labels: np.ndarray, kind: str, path: str,
                  labels_path: str = LABELS) -> LabelProblem | None:
    """The first label refused (labels shape (n,)): not finite, or, for ``kind``
    :data:`~worker.losses.CLASSES`, not a class label.

    ``path`` names where non-finite values were read; a bad class label is named as
    ``labels_path[row]``.
    """
    bad = np.flatnonzero(~np.isfinite(labels))
    if bad.size:
        i = int(bad[0])
        return (i, "data", path, f"the label of row {{row}} is {labels[i]}; every value must "
                                 f"be finite: replace or drop NaN and infinite entries")
    if kind != CLASSES:
        return None
    bad = np.flatnonzero(~np.isin(labels, (-1.0, 0.0, 1.0)))
    if bad.size:
        i = int(bad[0])
        return (i, "spec", f"{labels_path}[{{row}}]", f"{float(labels[i])!r} is not a class "
                f"label; give +1/-1 (or 1/0, 0 meaning -1)")
    return None


def raise_problem(problem: LabelProblem, row: int) -> None:
    """Raise ``problem`` as the error naming ``row``."""
    _, kind, path, message = problem
    path, message = path.format(row=row), message.format(row=row)
    raise DataError(path, message) if kind == "data" else SpecError.at(path, message)


def signed_labels(labels: np.ndarray, kind: str) -> np.ndarray:
    """Checked labels as the kernels take them: 0 read as -1 for class labels."""
    return labels if kind != CLASSES else np.where(labels == 0, -1.0, labels)


def checked_labels(labels: np.ndarray, kind: str, path: str,
                   labels_path: str = LABELS) -> np.ndarray:
    """Labels (n,) checked for ``kind`` and signed, or the error naming the first bad row."""
    problem = label_problem(labels, kind, path, labels_path)
    if problem is not None:
        raise_problem(problem, problem[0])
    return signed_labels(labels, kind)


def label_kind(loss: str) -> str:
    """:data:`~worker.losses.CLASSES` or :data:`~worker.losses.TARGETS` for a loss name."""
    return LOSSES[loss].labels
