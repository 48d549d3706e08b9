"""SVRG OL's settings, shared by the algorithm (:mod:`worker.algorithms.runners.svrg_ol`) and its
batch phase (:mod:`worker.distributed.batch`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worker.settings import DaskSettings


@dataclass(frozen=True)
class SvrgOptions:
    """Plain SVRG OL settings (mirrors ``spec.solver.svrg``; ``None`` means automatic).

    Where the examples are is not a setting: partitioned data already open reach the runner
    as its ``source`` (:func:`worker.algorithms.registry.run_algorithm`). ``cluster`` is the
    process's Dask settings, resolved by the caller (:func:`worker.pipeline.solve.solve`
    reads them once); without them a batch phase on Dask is refused, never guessed."""

    learner: str = "adagrad"
    schedule: str = "practical"
    serial_steps: int | None = None
    batch_size: int | None = None
    workers: int | None = None
    partition_rows: int = 2**18
    cluster: DaskSettings | None = None

    @classmethod
    def from_spec(cls, svrg: Any, cluster: DaskSettings) -> SvrgOptions:
        """From the validated ``solver.svrg`` model and the process's Dask settings."""
        def automatic(value: Any) -> int | None:
            return None if value == "auto" else int(value)
        return cls(learner=svrg.learner, schedule=svrg.schedule,
                   serial_steps=automatic(svrg.serial_steps),
                   batch_size=automatic(svrg.batch_size), workers=automatic(svrg.workers),
                   partition_rows=svrg.partition_rows, cluster=cluster)
