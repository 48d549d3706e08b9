"""The spec's group-loss constraints (docs/rates.md#group-losses): the mean loss of a group's
examples at most a bound, fairlearn's ``BoundedGroupLoss`` (Agarwal, Dudík & Wu 2019, "Fair
Regression", §2) and the loss constraints of Cotter, Jiang & Sridharan 2019 (§6.1's robust
problem plays the same constraints against a slack).

The loss is one of :data:`~worker.losses.LOSSES`, on the one score of the model; the examples
are the objective's (``objective.data``, its groups) or the constraint's own ``data``. Every
loss is non-negative, so a negative bound can never hold and is refused here; a group absent
from the data and labels the loss does not take are refused when the data are read
(:mod:`worker.problem.compile_group_loss`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from worker.losses import LOSSES
from worker.spec.rates import RateData
from worker.spec.strict import StrictModel

#: The losses a group-loss constraint bounds (losses of one score).
GROUP_LOSSES = tuple(LOSSES)


class GroupLossConstraint(StrictModel):
    """mean over the examples of ``group`` (null: every example) of ``loss`` <= ``rhs``."""

    type: Literal["group_loss"]
    group: str | None = None
    loss: Literal[GROUP_LOSSES]  # type: ignore[valid-type]
    op: Literal["<="] = "<="
    rhs: Annotated[float, Field(allow_inf_nan=False)]
    data: RateData | None = None

    @field_validator("loss", mode="before")
    @classmethod
    def _known_loss(cls, loss: Any) -> Any:
        if isinstance(loss, str) and loss not in GROUP_LOSSES:
            raise ValueError(f"unknown loss {loss!r}; a group's mean loss is one of "
                             f"{', '.join(GROUP_LOSSES)}")
        return loss

    @field_validator("rhs")
    @classmethod
    def _reachable(cls, rhs: float) -> float:
        if rhs < 0:
            raise ValueError(f"{rhs!r}: every loss is >= 0, so a mean loss <= {rhs!r} can "
                             "never hold; give a bound >= 0")
        return rhs
