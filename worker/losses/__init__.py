"""The losses of ``objective.loss``: one module per loss, one record each in :data:`LOSSES`.

Adding a loss: a module here with its compiled ``value`` and ``slope`` and a :class:`Loss`
record (a new ``code``, its :class:`LabelRule`, whether it is smooth or piecewise linear, its
CVXPY reference, its :class:`ConicForm` or None), one line in :data:`LOSSES`, and its line in
the kernels' dispatch (``_loss`` behind :func:`worker.kernels.objective.loss_value` and
``loss_slope``). The spec, the label checks and messages, the method choice, the methods'
refusals and the tests take it from here (docs/extending.md). Code 3 is the quadratic
objective (:data:`QUADRATIC`), which is not a loss of a score.

``pairwise_hinge`` (:data:`PAIRWISE_HINGE`) and ``softmax_cross_entropy``
(:data:`SOFTMAX_CROSS_ENTROPY`) are the names of ``objective.loss`` without a record of their
own. pairwise_hinge's data are pairs of rows (x+, x-), and it compiles to the
:data:`PAIRWISE_BASE` loss (hinge) on the rows x+ - x- with every label 1.
"""

from __future__ import annotations

from worker.losses import hinge, logistic, squared, squared_hinge
from worker.losses.label_rules import CLASSES, TARGETS, LabelRule
from worker.losses.record import ConicForm, Loss

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


def loss_of(code: int) -> Loss | None:
    """The record of the objective kind ``code``; None for the quadratic objective
    (:data:`QUADRATIC`) and a network's softmax head, which are not losses of one score and
    are smooth. An unknown code raises KeyError."""
    if code == QUADRATIC or code < 0:
        return None
    return BY_CODE[code]


def is_smooth(code: int) -> bool:
    """Whether the objective of kind ``code`` is differentiable (:attr:`Loss.smooth`)."""
    record = loss_of(code)
    return record is None or record.smooth


def is_piecewise_linear(code: int) -> bool:
    """Whether the objective of kind ``code`` is the hinge's LP
    (:attr:`Loss.piecewise_linear`)."""
    record = loss_of(code)
    return record is not None and record.piecewise_linear

__all__ = ["BY_CODE", "CLASSES", "LOSSES", "LOSS_NAMES", "PAIRWISE_BASE", "PAIRWISE_HINGE",
           "QUADRATIC", "SOFTMAX_CROSS_ENTROPY", "TARGETS", "ConicForm", "LabelRule", "Loss",
           "is_piecewise_linear", "is_smooth", "loss_of"]
