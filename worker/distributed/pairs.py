"""``pairwise_hinge``'s tables read in row-aligned partitions, each by whoever holds it.

Row i of ``objective.data.positive`` should outscore row i of ``objective.data.negative``
(LightTouch paper §6), so partition k of both tables covers the same rows [start, stop): a
:class:`PairPlan` fixes those ranges on the driver from the files' headers and footers only
(the same sources, data roots and byte caps as every reference), and
:func:`pair_part` reads a partition's bytes of both files with ranged reads and returns the
differences x+ - x- as the kernels' :class:`~worker.kernels.svrg.Rows` (hinge, label 1: the
loss ``pairwise_hinge`` compiles to), global row = ``start`` + local row.

==========  ===================================================================================
format      partition
==========  ===================================================================================
``npy``     rows [start, start + rows) of a C-ordered 2-D array: one byte range per table
``parquet`` the positive table's consecutive row groups of at most ``partition_rows`` rows (one
            group at least); the negative table reads the row groups that cover the same
            rows, whatever its own grouping, and keeps those rows
==========  ===================================================================================

A calibrated model's raw tables (parquet, named columns) carry the model's fitted
transform in the plan (:mod:`worker.distributed.raw_tables`): a partition reads only the
model's columns of its row groups and turns each side's rows into feature rows where it is
read.

Example weights (``objective.data.weights``, one per pair) ride on the plan as pointwise
examples' do (:class:`~worker.distributed.partitions.PlanWeights`) and are read into each
partition's rows after the census (:func:`worker.distributed.pair_batch.read_pairs`).

Both tables must have the same rows (checked on the plan) and width (checked when a
partition is read); a value that is not finite fails the job with its table, global row,
column and file named. Other formats (csv, svmlight, npz, ...) are read whole by the driver.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from worker.data.csr import as_csr
from worker.data.formats import REGISTRY
from worker.data.formats.expansion import expansion_budget
from worker.data.formats.numpy_files import NpyLayout, npy_layout
from worker.data.refs import DataRef
from worker.distributed.chunks import parsing
from worker.distributed.head import PlanSizes
from worker.distributed.partitions import NPY, ROW_GROUPS, PlanWeights, plan_weights, readable
from worker.distributed.ranges import open_ranges, read_range
from worker.errors import DataError, SpecError
from worker.kernels.svrg import Rows
from worker.losses import PAIRWISE_BASE, PAIRWISE_HINGE
from worker.settings import DataSettings
from worker.spec.models import EmpiricalRisk, RateConstraint, Spec
from worker.tables.columns import Table as Columns
from worker.tables.model import TableModel
from worker.tables.read import CELL_BYTES, read_parquet_rows

POSITIVE, NEGATIVE = "objective.data.positive", "objective.data.negative"

#: The algorithms that run on partitioned pairs: the LightTouch family's members that
#: ``auto`` picks for a pairwise hinge past the exact methods' size, and SVRG OL.
PAIR_ALGORITHMS = ("auto", "lighttouch", "fulltouch", "svrg_ol")


@dataclass(frozen=True)
class Table:
    """One side of the pairs: its reference, JSON path, rows, columns (a parquet footer's
    every column), and where its rows are (an ``npy`` layout, or the rows of each parquet
    row group)."""

    ref: DataRef
    path: str
    rows: int
    columns: int
    npy: NpyLayout | None = None
    group_rows: tuple[int, ...] = ()


@dataclass(frozen=True)
class PairPlan(PlanWeights):
    """Row ranges [start, stop) read as one partition of both tables, and what reading them
    needs (``roots``: the data roots; ``size``: bytes of both files and of a weights file;
    ``transform``: a calibrated model's fitted transform of raw rows into feature rows, None
    when the tables hold the features); the pairs' weights, one per row, are a
    :class:`~worker.distributed.partitions.PlanWeights`."""

    positive: Table
    negative: Table
    ranges: tuple[tuple[int, int], ...]
    roots: tuple[str, ...]
    size: int
    transform: TableModel | None = None

    @property
    def n(self) -> int:
        """Pairs."""
        return self.positive.rows

    def row_entries(self, width: int) -> int:
        """Nonzeros a difference row of ``width`` columns may hold: every column of tables
        holding features, else twice a transformed row's."""
        if self.transform is None:
            return width
        return min(width, 2 * self.transform.row_entries(self.transform.categorical))

    def read_row_bytes(self, width: int) -> int:
        """Bytes one row of one table takes while a partition is read: its dense values, or
        the model's columns and their feature row."""
        if self.transform is None:
            return 8 * width
        return CELL_BYTES * len(self.transform.columns) + 8 * self.row_entries(width)


def pairs_partitionable(spec: Spec) -> bool:
    """Whether the spec's pairs can be read in partitions by the LightTouch family:
    :func:`pair_tables` and an algorithm of :data:`PAIR_ALGORITHMS`."""
    return pair_tables(spec) and spec.solver.algorithm in PAIR_ALGORITHMS


def pair_tables(spec: Spec) -> bool:
    """Whether the spec's pairs are tables a plan can cut: a ``pairwise_hinge`` objective on
    two ``npy`` or ``parquet`` references (no inline data, ``data:`` URI or ``sha256``) and
    no rate constraints."""
    objective = spec.objective
    if not isinstance(objective, EmpiricalRisk) or objective.loss != PAIRWISE_HINGE \
            or any(isinstance(c, RateConstraint) for c in spec.constraints):
        return False
    tables = (objective.data.positive, objective.data.negative)
    return all(readable(t) and REGISTRY[t.format].partitions.kind in (NPY, ROW_GROUPS)
               for t in tables)


def runs_partitioned(spec: Spec) -> bool:
    """Whether the job runs on partitioned pairs: :func:`pairs_partitionable` and
    ``solver.workers`` set (0: the partitioned plan in this process; n: on Dask)."""
    return spec.solver.workers is not None and pairs_partitionable(spec)


def plan_pairs(spec: Spec, roots: Sequence[Path], partition_rows: int,
               settings: DataSettings) -> PairPlan:
    """The row-aligned plan of a spec :func:`pairs_partitionable` accepts (module
    docstring), from headers and footers only."""
    data = spec.objective.data
    positive = table_layout(data.positive, POSITIVE, roots, settings)
    negative = table_layout(data.negative, NEGATIVE, roots, settings)
    if negative.rows != positive.rows:
        raise SpecError.at(NEGATIVE, f"{negative.rows} rows for {positive.rows} rows of "
                                     f"{POSITIVE}; give one negative row per positive row")
    if positive.rows == 0:
        raise SpecError.at(POSITIVE, "no pairs; give at least one row")
    size = sum(file_bytes(t.ref, t.path, roots, settings) for t in (positive, negative))
    weights, weight_npy, weight_values, weight_bytes = plan_weights(data.weights, roots,
                                                                    settings, POSITIVE)
    return PairPlan(positive, negative, row_ranges(positive, partition_rows),
                    tuple(str(root) for root in roots), size + weight_bytes, weights=weights,
                    weight_npy=weight_npy, weight_values=weight_values)


def plan_pair_tables(spec: Spec, roots: Sequence[Path], partition_rows: int,
                     partition_bytes: int, settings: DataSettings) -> PairPlan | None:
    """The plan of a spec whose pairs are :func:`pair_tables`, None for any other: the
    pairs' family of :data:`worker.distributed.placement.PARTITIONED_FAMILIES` (its
    ``partition_bytes`` is for line-cut files, which pairs never are)."""
    return plan_pairs(spec, roots, partition_rows, settings) if pair_tables(spec) else None


def pair_sizes(plan: PairPlan) -> PlanSizes:
    """The pairs' examples and entries from the tables' headers and footers alone: every
    cell of the wider table an entry of its difference, as many as the in-process path can
    hold (it reads both tables dense); the largest partition's share."""
    width = max(plan.positive.columns, plan.negative.columns)
    widest = max(stop - start for start, stop in plan.ranges)
    return PlanSizes(plan.n, plan.n * width, widest * width)


def file_bytes(ref: DataRef, path: str, roots: Sequence[Path], settings: DataSettings) -> int:
    """Bytes of the file ``ref`` (JSON ``path``), from its size alone."""
    with open_ranges(ref, path, roots, settings) as stream:
        return stream.seek(0, io.SEEK_END)


def table_layout(ref: DataRef, path: str, roots: Sequence[Path], settings: DataSettings) -> Table:
    """A table's rows and layout from its header (npy) or footer (parquet)."""
    with open_ranges(ref, path, roots, settings) as stream:
        if REGISTRY[ref.format].partitions.kind == NPY:
            npy = npy_layout(lambda a, b: read_range(stream, a, b), path)
            if npy is None or len(npy.shape) != 2:
                shape = npy.shape if npy else "Fortran-ordered"
                raise DataError(path, f"found an array of shape {shape}; need a C-ordered "
                                      f"2-D array of shape (pairs, columns)")
            return Table(ref, path, npy.shape[0], npy.shape[1], npy=npy)
        partitioning = REGISTRY[ref.format].partitions
        groups = parsing(lambda: partitioning.group_rows(stream), ref, path)
        columns = parsing(lambda: partitioning.columns(stream), ref, path)
    return Table(ref, path, int(sum(groups)), columns, group_rows=tuple(groups))


def row_ranges(table: Table, partition_rows: int) -> tuple[tuple[int, int], ...]:
    """Row ranges of at most ``partition_rows`` rows (npy), or of the positive table's
    consecutive row groups up to ``partition_rows`` rows (one group at least)."""
    if table.npy is not None:
        return tuple((start, min(start + partition_rows, table.rows))
                     for start in range(0, table.rows, partition_rows))
    ranges, start, stop = [], 0, 0
    for count in table.group_rows:
        if stop > start and stop - start + count > partition_rows:
            ranges.append((start, stop))
            start = stop
        stop += count
    ranges.append((start, stop))
    return tuple(ranges)


# -- a partition (where it is held) --------------------------------------------------------

class PairPart(NamedTuple):
    """A read partition: its differences as the kernels' rows, and the tables' width."""

    rows: Rows
    width: int


def pair_part(plan: PairPlan, k: int, settings: DataSettings) -> PairPart:
    """Partition ``k``'s differences x+ - x- (hinge rows, label 1), each table's bytes read
    in ranges and checked (module docstring), under the job's data ``settings``."""
    start, stop = plan.ranges[k]
    roots = [Path(r) for r in plan.roots]
    positive = _checked(plan.positive, start, stop, roots, settings, plan.transform)
    negative = _checked(plan.negative, start, stop, roots, settings, plan.transform)
    if positive.shape[1] != negative.shape[1]:
        raise DataError(NEGATIVE, f"rows {start}-{stop - 1} have {negative.shape[1]} columns "
                                  f"and {POSITIVE}'s {positive.shape[1]}; give both tables "
                                  f"the same columns")
    difference = as_csr(positive - negative, drop_zeros=True)
    rows = Rows(kind=np.int64(PAIRWISE_BASE.code),
                indptr=difference.indptr.astype(np.int64),
                indices=difference.indices.astype(np.int64),
                data=np.ascontiguousarray(difference.data, dtype=np.float64),
                labels=np.ones(stop - start), weights=np.ones(stop - start),
                first_row=np.int64(start))
    return PairPart(rows, int(positive.shape[1]))


def part_rows(part: PairPart) -> Rows:
    """A read partition's rows (the task the rounds sample)."""
    return part.rows


def part_census(part: PairPart) -> tuple[int, int, np.ndarray]:
    """(rows, width, nonzeros per column (width,)) of a read partition."""
    rows = part.rows
    return (int(rows.labels.shape[0]), part.width,
            np.bincount(rows.indices, minlength=part.width))


def _checked(table: Table, start: int, stop: int, roots: list[Path], settings: DataSettings,
             transform: TableModel | None) -> sp.csr_matrix:
    """Rows [start, stop) of one table as CSR (:func:`_block`), or the error naming its first
    value that is not finite by global row, column and file."""
    block = _block(table, start, stop, roots, settings, transform)
    bad = np.flatnonzero(~np.isfinite(block.data))
    if bad.size:
        row = int(np.searchsorted(block.indptr, bad[0], side="right")) - 1
        raise DataError(table.path, f"row {start + row} column {block.indices[bad[0]]} of "
                                    f"{table.ref.uri} is {block.data[bad[0]]}; every value "
                                    f"must be finite: replace or drop NaN and infinite entries")
    return block


def _block(table: Table, start: int, stop: int, roots: list[Path], settings: DataSettings,
           transform: TableModel | None = None) -> sp.csr_matrix:
    """Rows [start, stop) of one table as CSR (explicit zeros dropped), or the
    ``transform``'s feature rows of its raw rows."""
    if transform is not None:
        raw = table_rows(table, start, stop, transform.columns, roots, settings)
        return transform.features(Columns.of(raw, table.path, start))
    ref = table.ref
    with open_ranges(ref, table.path, roots, settings) as stream, \
            expansion_budget(settings.max_job_bytes):
        if table.npy is not None:
            npy = table.npy
            block = read_range(stream, npy.offset + start * npy.row_bytes,
                               npy.offset + stop * npy.row_bytes)
            return as_csr(npy.rows(block).astype(np.float64), drop_zeros=True)
        first, last, skip = covering_groups(table, start, stop)
        where = f"{table.path} (row groups {first}-{last})"
        read_groups = REGISTRY[ref.format].partitions.read_groups
        parsed = parsing(lambda: read_groups(stream, range(first, last + 1), ref, where),
                          ref, where)
    values = as_csr(parsed.values, drop_zeros=True)
    return values[skip:skip + stop - start]


def table_rows(table: Table, start: int, stop: int, columns: Sequence[str],
               roots: Sequence[Path], settings: DataSettings):
    """Rows [start, stop) of the named ``columns`` of a parquet table, as a pyarrow table
    (only the row groups that hold them are read)."""
    ref = table.ref
    first, last, skip = covering_groups(table, start, stop)
    where = f"{table.path} (row groups {first}-{last})"
    with open_ranges(ref, table.path, roots, settings) as stream, \
            expansion_budget(settings.max_job_bytes):
        rows = parsing(lambda: read_parquet_rows(stream, range(first, last + 1), columns,
                                                 where), ref, where)
    return rows.slice(skip, stop - start)


def covering_groups(table: Table, start: int, stop: int) -> tuple[int, int, int]:
    """The first and last row groups holding rows [start, stop), and the rows of the first
    group before ``start``."""
    ends = np.cumsum(table.group_rows)
    first = int(np.searchsorted(ends, start, side="right"))
    last = int(np.searchsorted(ends, stop - 1, side="right"))
    return first, last, start - (int(ends[first - 1]) if first else 0)
