"""How many examples and feature entries a :class:`~worker.distributed.partitions.PartitionPlan`
holds, estimated on the driver from the head of its file before anything else is read: what
the placement (:mod:`worker.distributed.placement`) weighs against the per-job budget.

The head is parsed by the partitions' own reader (:func:`worker.distributed.chunks.read_chunk`)
and scaled by what the plan already knows without parsing:

==============  ===========================================================================
layout          rows, and entries per row
==============  ===========================================================================
``npy``         rows from the header; entries per row from the first :data:`HEAD_ROWS` rows
``row_groups``  rows from the footer; entries per row from the first partition
``lines``       rows and entries of the first :data:`HEAD_BYTES` bytes, scaled by the file's
                bytes after its header
``whole``       not estimated (None): the file is read whole by one process either way
==============  ===========================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from worker.distributed.chunks import read_chunk
from worker.distributed.partitions import LINES, NPY, ROW_GROUPS, PartitionPlan, Piece
from worker.settings import DataSettings

#: Bytes of a line-cut file parsed to estimate its rows and entries (1 MiB).
HEAD_BYTES = 2**20

#: Rows of an ``npy`` file parsed to estimate its entries per row.
HEAD_ROWS = 4096


@dataclass(frozen=True)
class PlanSizes:
    """Estimated examples ``n`` and feature entries (nonzeros) of a plan, and per partition
    (``partition_entries``: the largest partition's, by its share of the rows or bytes)."""

    n: int
    entries: int
    partition_entries: int


def plan_sizes(plan: PartitionPlan, settings: DataSettings) -> PlanSizes | None:
    """The plan's examples and entries estimated from its head (module docstring); None for
    a file that is read whole."""
    if plan.layout == NPY:
        rows = plan.npy.shape[0]
        head, share = Piece(0, min(rows, HEAD_ROWS)), _largest(plan) / max(rows, 1)
    elif plan.layout == ROW_GROUPS:
        rows = plan.pieces[-1].stop
        head, share = plan.pieces[0], _largest(plan) / max(rows, 1)
    elif plan.layout == LINES:
        end = plan.pieces[-1].stop
        head = Piece(plan.begin, min(end, plan.begin + HEAD_BYTES))
        share = _largest(plan) / max(end - plan.begin, 1)
    else:
        return None
    chunk = read_chunk(replace(plan, pieces=(head,)), 0, settings)
    head_rows, head_entries = chunk.features.shape[0], chunk.features.nnz
    if plan.layout == LINES:
        rows = math.ceil(head_rows * (plan.pieces[-1].stop - plan.begin)
                         / max(head.stop - head.start, 1))
    entries = math.ceil(head_entries / max(head_rows, 1) * rows)
    return PlanSizes(rows, entries, math.ceil(entries * share))


def _largest(plan: PartitionPlan) -> int:
    """Rows (npy, row groups) or bytes (lines) of the plan's largest partition."""
    return max(piece.stop - piece.start for piece in plan.pieces)
