"""The losses of ``objective.loss``: one module per loss, one record each in :data:`LOSSES`.

Adding a loss: a module here with its compiled ``value`` and ``slope`` and a :class:`Loss`
record (a new ``code``, its :class:`LabelRule`), one line in :data:`LOSSES`, and its line in
the kernels' dispatch (``_loss`` behind :func:`worker.kernels.objective.loss_value` and
``loss_slope``). The spec, the label checks and messages and the tests' reference take it
from here. Code 3 is the quadratic objective (:data:`QUADRATIC`), which is not a loss of a
score.

``pairwise_hinge`` (:data:`PAIRWISE_HINGE`) and ``softmax_cross_entropy``
(:data:`SOFTMAX_CROSS_ENTROPY`) are the names of ``objective.loss`` without a record of their
own. pairwise_hinge's data are pairs of rows (x+, x-), and it compiles to the
:data:`PAIRWISE_BASE` loss (hinge) on the rows x+ - x- with every label 1.
"""

from __future__ import annotations

from worker.losses import hinge, logistic, squared, squared_hinge
from worker.losses.label_rules import CLASSES, TARGETS, LabelRule
from worker.losses.record import Loss

#: The objective kind of ``{"type": "quadratic"}``.
QUADRATIC = 3

LOSSES: dict[str, Loss] = {record.name: record for record in (
    hinge.LOSS,
    logistic.LOSS,
    squared.LOSS,
    squared_hinge.LOSS,
)}

#: Records by code, for the code-switching callers.
BY_CODE: dict[int, Loss] = {record.code: record for record in LOSSES.values()}

#: The ranking loss on pairs of rows, compiled to :data:`PAIRWISE_BASE` on their differences.
PAIRWISE_HINGE = "pairwise_hinge"
PAIRWISE_BASE = hinge.LOSS

#: The multiclass loss on K scores: log sum_k exp(s_k) - s_y for a class index y in 0..K-1.
#: Not a loss of one score, so no record: networks' heads compute it
#: (:func:`worker.kernels.network.head_losses`).
SOFTMAX_CROSS_ENTROPY = "softmax_cross_entropy"

#: Every name ``objective.loss`` accepts.
LOSS_NAMES = (*LOSSES, PAIRWISE_HINGE, SOFTMAX_CROSS_ENTROPY)

__all__ = ["BY_CODE", "CLASSES", "LOSSES", "LOSS_NAMES", "PAIRWISE_BASE", "PAIRWISE_HINGE",
           "QUADRATIC", "SOFTMAX_CROSS_ENTROPY", "TARGETS", "LabelRule", "Loss"]
