"""Partitioned pairs (:mod:`worker.distributed.pairs`) opened where the rounds run: read
and censused by an executor (in this process for ``solver.workers: 0``, else on Dask), then
held as a :class:`~worker.distributed.batch.PartitionedBatch` whose partitions are the
pairs' differences (each pair's example weight of mean one in its rows' ``weights``, read
and normalized as pointwise examples' are: :mod:`worker.distributed.weights`), so the
rounds' samples and the objective values after the run are the same map-reduces as SVRG
OL's.

The driver's and each worker's memory (:func:`pair_memory`): the driver holds the
constraints, one round's sampled rows and the candidates, never a row per pair; a worker
holds its partitions' differences (and weights) and, while reading one, that partition's
dense blocks of both tables.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from worker.distributed.batch import PartitionedBatch
from worker.distributed.census import add_counts
from worker.distributed.executors import Executor, executor_for
from worker.distributed.pairs import (
    POSITIVE,
    PairPart,
    PairPlan,
    pair_part,
    part_census,
    part_rows,
)
from worker.distributed.tasks import tree_reduce
from worker.distributed.weights import Tally, held_weights, rows_tally, weights_round
from worker.errors import DataError
from worker.kernels.svrg import Rows
from worker.settings import DaskSettings, DataSettings

#: Bytes of one stored nonzero of a partition's differences (value and column index).
ENTRY_BYTES = 16

#: A weighted pair's more on its worker: its weight as read and divided by the mean.
WEIGHT_BYTES = 16


@dataclass(frozen=True)
class PairMemory:
    """The partitioned job's memory estimate in bytes: the driver's (a round's rows at
    their most nonzeros) and each worker's (its share of the partitions' differences at
    their most nonzeros, plus one partition's two tables while it is read), for ``workers``
    workers (0: one process holds both); :meth:`~worker.distributed.pairs.PairPlan.row_entries`
    bounds a row's nonzeros (every column of tables holding features), and weighted pairs
    add :data:`WEIGHT_BYTES` each to their worker's share."""

    driver_bytes: int
    worker_bytes: int
    workers: int


def pair_memory(plan: PairPlan, width: int, round_rows: int, workers: int) -> PairMemory:
    """:class:`PairMemory` of a plan of ``width`` columns whose rounds sample
    ``round_rows`` rows."""
    widest = max(stop - start for start, stop in plan.ranges)
    row = ENTRY_BYTES * plan.row_entries(width)
    share = -(-len(plan.ranges) // max(workers, 1)) * widest
    worker = share * (row + (WEIGHT_BYTES if plan.weighted else 0)) \
        + 2 * widest * plan.read_row_bytes(width)
    driver = min(round_rows, plan.n) * row
    return PairMemory(driver + (worker if workers == 0 else 0), worker, workers)


def read_pairs(executor: Executor, plan: PairPlan, seed: int,
               settings: DataSettings) -> PartitionedBatch:
    """Read every partition where the executor runs (under the job's data ``settings``)
    and census them: rows, the one width, nonzeros per column; for weighted pairs, one
    more round reads each partition's weights and counts the columns with them
    (:mod:`worker.distributed.weights`)."""
    weighted = plan.weighted
    plan, inline = held_weights(plan)
    parts = [executor.submit(pair_part, plan, k, settings) for k in range(len(plan.ranges))]
    censuses = executor.gather([executor.submit(part_census, part) for part in parts],
                               "reading the pairs (census)")
    widths = {width for _, width, _ in censuses}
    if len(widths) > 1:
        raise DataError(plan.positive.path, f"partitions have {sorted(widths)} columns; give "
                                            f"every row the same columns")
    (width,) = widths
    counts = np.asarray(tree_reduce([c for _, _, c in censuses], add_counts), dtype=np.int64)
    moved = executor.moved(sum(len(pickle.dumps(c)) for c in censuses)
                           + len(censuses) * len(pickle.dumps(plan)))
    rows = [executor.submit(part_rows, part) for part in parts]
    entries = int(counts.sum())
    if weighted:
        spans = [(start, stop - start) for start, stop in plan.ranges]
        counts, weights, weight_bytes = weights_round(executor, plan, inline, parts, spans,
                                                      settings, pair_tally, POSITIVE)
        rows = [executor.submit(weighted_rows, part, part_weights)
                for part, part_weights in zip(parts, weights, strict=True)]
        moved += weight_bytes
    return PartitionedBatch(executor, rows, plan.n, width, counts, seed, sampled=True,
                            setup_rounds=1 + weighted, setup_bytes=moved, entries=entries)


def weighted_rows(part: PairPart, weights: np.ndarray) -> Rows:
    """A read partition's rows carrying its pairs' ``weights`` (rows,) of mean one."""
    return part.rows._replace(weights=weights)


def pair_tally(part: PairPart, weights: np.ndarray) -> Tally:
    """A read partition's :class:`~worker.distributed.weights.Tally` of its pairs'
    ``weights`` (rows,) over their differences."""
    rows = part.rows
    return rows_tally(rows.indptr, rows.indices, part.width, weights)


@contextmanager
def open_pairs(plan: PairPlan, workers: int | None, cluster: DaskSettings | None, seed: int,
               settings: DataSettings) -> Iterator[PartitionedBatch]:
    """The plan's partitions read and censused where the rounds run: this process for
    ``workers`` 0, else the cluster at ``LIGHTTOUCH_DASK_SCHEDULER`` or a ``LocalCluster`` of
    ``workers`` single-threaded workers (None: one per core; ``cluster``: the process's
    Dask settings)."""
    with executor_for(workers, cluster) as executor:
        yield read_pairs(executor, plan, seed, settings)
