"""The losses of ``objective.loss``: one module per loss, one record each in :data:`LOSSES`.

Adding a loss: a module here with its compiled ``value`` and ``slope`` and a :class:`Loss`
record (a new ``code``), one line in :data:`LOSSES`, and its line in the kernels' dispatch
(``_loss`` behind :func:`worker.kernels.objective.loss_value` and ``loss_slope``). The spec, the
label checks and the tests' reference take it from here. Code 3 is the quadratic objective
(:data:`QUADRATIC`), which is not a loss of a score.
"""

from __future__ import annotations

from worker.losses import hinge, logistic, squared, squared_hinge
from worker.losses.record import CLASSES, TARGETS, Loss

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

__all__ = ["CLASSES", "LOSSES", "BY_CODE", "QUADRATIC", "TARGETS", "Loss"]
