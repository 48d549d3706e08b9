"""SVRG OL's settings, shared by the algorithm (:mod:`worker.algorithms.svrg_ol`) and its
batch phase (:mod:`worker.distributed.batch`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worker.distributed.batch import PartitionedBatch


@dataclass(frozen=True)
class SvrgOptions:
    """Plain SVRG OL settings (mirrors ``spec.solver.svrg``; ``None`` means automatic).

    ``source`` is the open batch phase when the objective's rows stay in partitions
    (:class:`~worker.distributed.batch.PartitionedBatch`); ``None``: the compiled
    problem's rows.
    """

    learner: str = "adagrad"
    schedule: str = "practical"
    serial_steps: int | None = None
    batch_size: int | None = None
    workers: int | None = None
    partition_rows: int = 2**18
    source: PartitionedBatch | None = None

    @classmethod
    def from_spec(cls, svrg: Any, source: PartitionedBatch | None = None) -> SvrgOptions:
        """From the validated ``solver.svrg`` model, and the data location for Dask."""
        def automatic(value: Any) -> int | None:
            return None if value == "auto" else int(value)
        return cls(learner=svrg.learner, schedule=svrg.schedule,
                   serial_steps=automatic(svrg.serial_steps),
                   batch_size=automatic(svrg.batch_size), workers=automatic(svrg.workers),
                   partition_rows=svrg.partition_rows, source=source)
