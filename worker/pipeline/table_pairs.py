"""A calibrated model's raw pair tables lowered without reading them whole, when the job
reads its pairs in partitions (docs/scale.md#raw-tables-of-a-calibrated-model): with
``solver.workers``, or past ``LIGHTTOUCH_MAX_JOB_BYTES`` with a Dask scheduler to send them
to. The placement is decided from the parquet footers alone, before any row is read; the
model's calibration is then fitted from a sample round
(:mod:`worker.distributed.raw_pairs`), and the lowered spec names the raw tables, which each
partition turns into feature rows where it is read. Within the budget the in-memory
lowering (:func:`worker.tables.lower.lower_tables`) and its numbers stand.
"""

from __future__ import annotations

from dataclasses import replace

from worker.distributed.executors import executor_for
from worker.distributed.pairs import PairPlan, pairs_partitionable, plan_pairs
from worker.distributed.placement import PAIRS, Placement, place, workers_placement
from worker.distributed.raw_pairs import fitted_transform, raw_pair_tables
from worker.pipeline.memory import planned_parts
from worker.pipeline.reporting import refuse_split
from worker.problem.compile import DataSource
from worker.settings import JobSettings
from worker.spec.models import PairData, Spec
from worker.tables.lower import Lowered, hand_built, table_columns, table_model
from worker.tables.read import CELL_BYTES


class PlacedSource(DataSource):
    """A data source whose job's placement and partition plan were decided as its spec was
    lowered (:func:`worker.pipeline.prologue.placed` takes them as they are)."""

    def __init__(self, base: DataSource, placement: Placement, plan: PairPlan):
        super().__init__(base.roots, base.settings, base.stats)
        self.placement = placement
        self.plan = plan


def partitioned_lowering(spec: Spec, source: DataSource, settings: JobSettings) -> Lowered | None:
    """The lowering of a calibrated model on raw pair tables read in partitions (module
    docstring); None when the spec is not of that kind or its pairs stay in this process.

    Raises
    ------
    SpecError
        Over the budget with nowhere else to run (:func:`worker.distributed.placement.place`),
        or a held-out share of partitioned data.
    DataError
        A footer or a partition's column cannot be read, or holds what the model cannot
        take (named by table, column and global row).
    """
    found = raw_pairs_placed(spec, source, settings)
    if found is None:
        return None
    placement, plan = found
    refuse_split(spec)
    with executor_for(placement.workers, settings.cluster) as executor:
        transform = fitted_transform(spec, plan, executor, spec.solver.seed, settings.data)
    data = spec.objective.data
    lowered = hand_built(spec, PairData(positive=data.positive, negative=data.negative),
                         transform)
    return Lowered(lowered, PlacedSource(source, placement, replace(plan, transform=transform)),
                   transform)


def raw_pairs_placed(spec: Spec, source: DataSource,
                     settings: JobSettings) -> tuple[Placement, PairPlan] | None:
    """Where a calibrated model's raw pair tables are read and their plan, decided from the
    parquet footers alone (no row is read; the plan has no transform yet); None when the
    spec is not of that kind or its tables are lowered in memory.

    Raises
    ------
    SpecError
        Over the budget with nowhere else to run.
    DataError
        A footer that cannot be read, or tables of different rows.
    """
    if not raw_pair_tables(spec) or (spec.solver.workers is None
                                     and settings.memory_limit is None):
        return None
    plan = plan_pairs(spec, source.roots, spec.solver.svrg.partition_rows, settings.data)
    placement = _placement(spec, plan, settings)
    return None if placement is None else (placement, plan)


def _placement(spec: Spec, plan: PairPlan, settings: JobSettings) -> Placement | None:
    """Where the pairs are read: as ``solver.workers`` asks (for an algorithm that reads
    partitioned pairs), else past the budget as :func:`place` says; None: in this process,
    lowered in memory."""
    workers = spec.solver.workers
    if workers is not None:
        if not pairs_partitionable(spec):
            return None
        return workers_placement(workers, settings.memory_limit, settings.cluster,
                                 "the pairs' tables are read in row-aligned partitions")
    placement = place(spec, PAIRS, in_process_estimate(spec, plan), settings.memory_limit,
                      plan.size, settings.cluster)
    return placement if placement.partitioned else None


def in_process_estimate(spec: Spec, plan: PairPlan) -> int:
    """Bytes the in-memory lowering and solve would hold, from the footers and the spec:
    the model's columns of both tables as read, and the pairs' differences at their most
    nonzeros (:meth:`~worker.tables.model.TableModel.row_entries`) as compiled."""
    categorical = [feature.categorical for feature in spec.model.features]
    entries = plan.n * 2 * table_model(spec.model.type).row_entries(categorical)
    read = 2 * plan.n * len(table_columns(spec)) * CELL_BYTES
    return read + sum(planned_parts(spec, plan.n, entries).values())
