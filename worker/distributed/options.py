"""SVRG OL's settings, shared by the algorithm (:mod:`worker.algorithms.runners.svrg_ol`) and its
batch phase (:mod:`worker.distributed.batch`)."""

from __future__ import annotations

from dataclasses import dataclass

from worker.settings import DaskSettings


@dataclass(frozen=True)
class SvrgOptions:
    """Plain SVRG OL settings (mirrors ``spec.solver.svrg``, made by
    :func:`worker.pipeline.options.svrg_options`; ``None`` means automatic).

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
