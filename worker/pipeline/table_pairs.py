"""A calibrated model's raw parquet tables lowered without reading them whole, when the job
reads them in partitions (docs/scale.md#raw-tables-of-a-calibrated-model): a
``pairwise_hinge``'s two tables with ``solver.workers``, a pointwise objective's
``data.table`` with ``svrg_ol`` and ``solver.svrg.workers``, or either past
``LIGHTTOUCH_MAX_JOB_BYTES`` with a Dask scheduler to send them to. The placement is
decided from the parquet footers alone, before any row is read; the model's calibration is
then fitted from a sample round (:mod:`worker.distributed.raw_tables`), and the lowered spec
names the raw tables, which each partition turns into feature rows where it is read. Within
the budget the in-memory lowering (:func:`worker.tables.lower.lower_tables`) and its numbers
stand.
"""

from __future__ import annotations

from dataclasses import replace

from worker.distributed.executors import executor_for
from worker.distributed.pairs import PairPlan, pairs_partitionable, plan_pairs
from worker.distributed.partitions import PartitionPlan
from worker.distributed.placement import (
    AUTO,
    FILES,
    PAIRS,
    Placement,
    place,
    workers_placement,
)
from worker.distributed.raw_tables import (
    RawTables,
    fitted_transform,
    plan_table,
    raw_example_table,
    raw_pair_tables,
)
from worker.distributed.weights import held_weights
from worker.pipeline.memory import planned_parts
from worker.pipeline.reporting import refuse_split
from worker.problem.compile import DataSource
from worker.settings import JobSettings
from worker.spec.models import ExampleData, PairData, Spec
from worker.tables.lower import Lowered, hand_built, table_columns, table_model
from worker.tables.read import CELL_BYTES

#: The algorithm that reads a pointwise table's partitions when the spec names it.
SVRG_OL = "svrg_ol"


class PlacedSource(DataSource):
    """A data source whose job's placement and partition plan were decided as its spec was
    lowered (:func:`worker.pipeline.prologue.placed` takes them as they are)."""

    def __init__(self, base: DataSource, placement: Placement,
                 plan: PairPlan | PartitionPlan):
        super().__init__(base.roots, base.settings, base.stats)
        self.placement = placement
        self.plan = plan


def partitioned_lowering(spec: Spec, source: DataSource, settings: JobSettings) -> Lowered | None:
    """The lowering of a calibrated model on raw tables read in partitions (module
    docstring); None when the spec is not of that kind or its tables stay in this process.

    Raises
    ------
    SpecError
        Over the budget with nowhere else to run (:func:`worker.distributed.placement.place`),
        a held-out share of partitioned data, or pair weights that cannot be read in row
        ranges (:func:`~worker.distributed.weights.held_weights`), before any row is read.
    DataError
        A footer or a partition's column cannot be read, or holds what the model cannot
        take (named by table, column and global row).
    """
    found = raw_tables_placed(spec, source, settings)
    if found is None:
        return None
    placement, plan, tables = found
    refuse_split(spec)
    if isinstance(plan, PairPlan):
        held_weights(plan)
    with executor_for(placement.workers, settings.cluster) as executor:
        transform = fitted_transform(spec, tables, executor, spec.solver.seed, settings.data)
    data = spec.objective.data
    examples = PairData(positive=data.positive, negative=data.negative, weights=data.weights) \
        if isinstance(plan, PairPlan) else ExampleData(features=data.table)
    return Lowered(hand_built(spec, examples, transform),
                   PlacedSource(source, placement, replace(plan, transform=transform)),
                   transform)


def raw_tables_placed(spec: Spec, source: DataSource, settings: JobSettings
                      ) -> tuple[Placement, PairPlan | PartitionPlan, RawTables] | None:
    """Where a calibrated model's raw pair tables or pointwise table are read, their plan
    and the tables the sample round reads, decided from the parquet footers alone (no row is
    read; the plan has no transform yet); None when the spec is not of that kind or its
    tables are lowered in memory.

    Raises
    ------
    SpecError
        Over the budget with nowhere else to run.
    DataError
        A footer that cannot be read, or pair tables of different rows.
    """
    if raw_pair_tables(spec):
        return _pairs_placed(spec, source, settings)
    if raw_example_table(spec):
        return _table_placed(spec, source, settings)
    return None


def _pairs_placed(spec: Spec, source: DataSource,
                  settings: JobSettings) -> tuple[Placement, PairPlan, RawTables] | None:
    """The pairs' placement: as ``solver.workers`` asks (for an algorithm that reads
    partitioned pairs), else past the budget as :func:`place` says; None: in this process,
    lowered in memory."""
    workers = spec.solver.workers
    if workers is None and settings.memory_limit is None:
        return None
    plan = plan_pairs(spec, source.roots, spec.solver.svrg.partition_rows, settings.data)
    if workers is not None:
        if not pairs_partitionable(spec):
            return None
        placement = workers_placement(workers, settings.memory_limit, settings.cluster,
                                      "the pairs' tables are read in row-aligned partitions")
    else:
        placement = place(spec, PAIRS, in_process_estimate(spec, plan.n, 2),
                          settings.memory_limit, plan.size, settings.cluster)
    return (placement, plan, RawTables.of_pairs(plan)) if placement.partitioned else None


def _table_placed(spec: Spec, source: DataSource,
                  settings: JobSettings) -> tuple[Placement, PartitionPlan, RawTables] | None:
    """A pointwise table's placement: as ``solver.svrg.workers`` asks for ``svrg_ol``, else
    past the budget as :func:`place` says; None: in this process, lowered in memory."""
    solver = spec.solver
    asked = solver.algorithm == SVRG_OL and solver.svrg.workers != AUTO
    if not asked and settings.memory_limit is None:
        return None
    plan, tables = plan_table(spec, source.roots, solver.svrg.partition_rows, settings.data)
    estimate = in_process_estimate(spec, tables.n, 1)
    if not asked and estimate <= settings.memory_limit:
        return None
    placement = place(spec, FILES, estimate, settings.memory_limit, plan.size,
                      settings.cluster)
    return (placement, plan, tables) if placement.partitioned else None


def in_process_estimate(spec: Spec, n: int, tables: int) -> int:
    """Bytes the in-memory lowering and solve would hold, from the footers and the spec:
    the model's columns of the ``tables`` (2 for pairs, 1 for a pointwise table) of ``n``
    rows each as read, and the feature rows (a pair's difference spans both sides) at
    their most nonzeros (:meth:`~worker.tables.model.TableModel.row_entries`) as
    compiled."""
    categorical = [feature.categorical for feature in spec.model.features]
    entries = n * tables * table_model(spec.model.type).row_entries(categorical)
    read = tables * n * len(table_columns(spec)) * CELL_BYTES
    return read + sum(planned_parts(spec, n, entries).values())
