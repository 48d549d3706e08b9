"""An objective's examples read partition by partition, each by whoever holds it (SVRG OL's
data-parallel batch phase, Cutkosky & Busa-Fekete §8.2).

A :class:`PartitionPlan` is made on the job's driver without parsing the data: it reads
only headers and metadata, through the same sources as every reference (data roots, the
http(s) address policy, the byte cap; :func:`worker.data.sources.open_source`). Partition ``k``
is then read by :func:`worker.distributed.chunks.read_chunk` with ranged reads of its own
bytes. How a file is cut is its format's :class:`~worker.data.formats.Partitioning`:

==============  =================================================================================
layout          partition
==============  =================================================================================
``npy``         ``partition_rows`` consecutive rows: one byte range after the header (C order)
``row_groups``  consecutive row groups (parquet) or record batches of at most
                ``partition_rows`` rows (one group at least)
``lines``       about ``partition_bytes`` bytes cut at line boundaries (svmlight, csv):
                partition k > 0 starts after the first newline at or after its start offset
                and every partition ends with the line holding its end offset (csv: after
                the header line; quoted fields must not hold newlines)
``whole``       one partition, read whole by one worker (npz, mtx: the formats are not
                splittable; so is a Fortran-ordered ``npy``)
==============  =================================================================================

Labels come from the features file (svmlight; a column format with ``label_column``; a
calibrated model's raw parquet table, whose model columns each partition turns into feature
rows: :mod:`worker.distributed.raw_tables`) or from a separate 1-D ``npy`` file, as do the
groups that rates (constraints, or the objective) count on (``objective.data.groups``, each
a 1-D ``npy`` file of 0/1; :mod:`worker.distributed.rate_parts`). Example weights, when
given, come from a separate 1-D ``npy`` file read in each partition's row range as such
labels are, or are inline values the driver holds and slices per partition
(:mod:`worker.distributed.weights`). The census round (:mod:`worker.distributed.census`)
then fixes every partition's offset, the index base and the width d.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from worker.catalogue import CATALOGUE
from worker.data.formats import REGISTRY
from worker.data.formats.numpy_files import NpyLayout, npy_layout
from worker.data.labels import LABELS
from worker.data.read import read_vector
from worker.data.refs import DataRef
from worker.distributed.ranges import open_ranges, read_line, read_range
from worker.errors import DataError
from worker.losses import PAIRWISE_HINGE
from worker.problem.compiled import LOSS_CODES
from worker.problem.rate_objective import PROXY_LOSS
from worker.settings import DataSettings
from worker.spec.models import EmpiricalRisk, RateConstraint, RateObjective, Spec
from worker.spec.tables import LabelColumn
from worker.tables.model import TableModel

#: Bytes of an svmlight or csv partition when ``LIGHTTOUCH_PARTITION_BYTES`` is not set.

#: Where the examples are in a spec.
DATA = "objective.data"
FEATURES = f"{DATA}.features"
WEIGHTS = f"{DATA}.weights"
GROUPS = f"{DATA}.groups"
#: A calibrated model's raw table and its label column (:mod:`worker.distributed.raw_tables`).
TABLE = f"{DATA}.table"
LABEL = f"{DATA}.label"

#: How a format is cut (:class:`worker.data.formats.Partitioning`).
LINES, NPY, ROW_GROUPS, WHOLE = "lines", "npy", "row_groups", "whole"


@dataclass(frozen=True)
class Piece:
    """One partition: bytes [start, stop) (lines), rows [start, stop) (npy), row groups."""

    start: int
    stop: int
    groups: tuple[int, ...] = ()


@dataclass(frozen=True)
class GroupColumn:
    """A group's 0/1 membership column, a 1-D ``npy`` file of ``npy``'s layout."""

    name: str
    ref: DataRef
    npy: NpyLayout


@dataclass(frozen=True, kw_only=True)
class PlanWeights:
    """A plan's example weights (:mod:`worker.distributed.weights`): ``weights`` the weights
    file (a reference that cannot be read in ranges has no ``weight_npy``: reading the
    partitions refuses it), ``weight_npy`` its layout, ``weight_values`` the inline weights
    (n,), held by the driver and never sent with the plan
    (:func:`worker.distributed.weights.held_weights`)."""

    weights: DataRef | None = None
    weight_npy: NpyLayout | None = None
    weight_values: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def weighted(self) -> bool:
        """Whether the examples carry weights (a file or inline values)."""
        return self.weights is not None or self.weight_values is not None


@dataclass(frozen=True)
class PartitionPlan(PlanWeights):
    """How an objective's examples are cut, and what reading a partition needs.

    ``size`` is the bytes of every file the plan reads (a line-cut features file ends at
    its last piece's ``stop``); ``names`` are a csv file's columns, ``begin`` the first
    byte after its header; ``npy`` and ``label_npy`` the layouts of the features and of a
    separate labels file (the weights: :class:`PlanWeights`); ``groups`` the groups rate
    constraints count on. A calibrated model's raw parquet table
    (:mod:`worker.distributed.raw_tables`) carries the model's fitted ``transform`` of raw
    rows into feature rows and the table's ``label`` (a column's name or a
    :class:`~worker.spec.tables.LabelColumn`).
    """

    features: DataRef
    labels: DataRef | None
    loss: str
    layout: str
    pieces: tuple[Piece, ...]
    roots: tuple[str, ...]
    size: int
    begin: int = 0
    names: tuple[str, ...] = ()
    npy: NpyLayout | None = None
    label_npy: NpyLayout | None = None
    groups: tuple[GroupColumn, ...] = ()
    transform: TableModel | None = None
    label: str | LabelColumn | None = None

    @property
    def kind(self) -> int:
        """The loss code (:mod:`worker.problem.compiled`)."""
        return LOSS_CODES[self.loss]


# -- the plan (on the driver) --------------------------------------------------------------

def plan_partitions(spec: Spec, roots: Sequence[Path], partition_rows: int,
                    partition_bytes: int,
                    settings: DataSettings) -> PartitionPlan | None:
    """The plan for an objective whose examples are references workers can read, solved by
    an algorithm that reads partitions (:attr:`worker.catalogue.Algorithm.partitioned`);
    None otherwise (:func:`plan_files`).
    """
    algorithm = CATALOGUE.get(spec.solver.algorithm)
    if algorithm is None or not algorithm.partitioned:
        return None
    return plan_files(spec, roots, partition_rows, partition_bytes, settings)


def plan_files(spec: Spec, roots: Sequence[Path], partition_rows: int, partition_bytes: int,
               settings: DataSettings) -> PartitionPlan | None:
    """The plan for an objective whose examples are references workers can read (a
    pointwise loss's, or a rate objective's, read as the hinge's), whichever algorithm the
    spec names; None when the driver must read them itself (inline values, ``data:`` URIs,
    ``sha256``, ``pairwise_hinge``, rate constraints with data of their own or groups in
    another form than ``npy`` files, labels neither in the features file nor ``npy``).
    """
    objective = spec.objective
    if isinstance(objective, EmpiricalRisk):
        loss = objective.loss
    elif isinstance(objective, RateObjective):
        loss = PROXY_LOSS   # read as its proxy's examples: ±1 labels
    else:
        return None
    if loss == PAIRWISE_HINGE or not _shared_rates(spec):
        return None
    features, labels = objective.data.features, objective.data.labels
    carried = isinstance(features, DataRef) and REGISTRY[features.format].carries_labels(features)
    rows_of_labels = labels is not None and readable(labels) \
        and REGISTRY[labels.format].partitions.kind == NPY
    if not (readable(features) and (rows_of_labels if labels is not None else carried)):
        return None
    with open_ranges(features, FEATURES, roots, settings) as stream:
        size = stream.seek(0, io.SEEK_END)
        plan = _cut(features, stream, size, partition_rows, partition_bytes)
    label_npy = None
    if labels is not None:
        label_npy, label_bytes = _vector_layout(labels, LABELS, roots, settings)
        size += label_bytes
    weights, weight_npy, weight_values, weight_bytes = plan_weights(
        objective.data.weights, roots, settings)
    size += weight_bytes
    groups = []
    for name, ref in (objective.data.groups or {}).items() if _counts_groups(spec) else ():
        layout, group_bytes = _vector_layout(ref, f"{GROUPS}.{name}", roots, settings)
        groups.append(GroupColumn(name, ref, layout))
        size += group_bytes
    return PartitionPlan(features=features, labels=labels, loss=loss,
                         roots=tuple(str(root) for root in roots), size=size,
                         label_npy=label_npy, weights=weights, weight_npy=weight_npy,
                         weight_values=weight_values, groups=tuple(groups), **plan)


def plan_weights(weights: object, roots: Sequence[Path], settings: DataSettings,
                 rows_of: str = FEATURES
                 ) -> tuple[DataRef | None, NpyLayout | None, np.ndarray | None, int]:
    """``objective.data.weights`` (one per row of ``rows_of``) as a plan holds them: (the
    weights file, its ``npy`` layout when it can be read in row ranges, the inline values
    (n,), the file's bytes); inline values and ``data:`` URIs are read here, since the spec
    holds them."""
    if weights is None:
        return None, None, None, 0
    if isinstance(weights, DataRef) and not weights.uri.startswith("data:"):
        if readable(weights) and REGISTRY[weights.format].partitions.kind == NPY:
            layout, size = _vector_layout(weights, WEIGHTS, roots, settings, rows_of)
            return weights, layout, None, size
        return weights, None, None, 0
    return None, None, read_vector(weights, WEIGHTS, roots=roots, settings=settings), 0


def _counts_groups(spec: Spec) -> bool:
    """Whether rates count on the objective's groups: rate constraints, or a rate as the
    objective."""
    return isinstance(spec.objective, RateObjective) or any(
        isinstance(c, RateConstraint) for c in spec.constraints)


def _shared_rates(spec: Spec) -> bool:
    """Whether the spec's rate constraints (if any) count on the objective's examples only,
    whose groups (when rates count on them) are 1-D ``npy`` files workers read in row
    ranges."""
    rates = [c for c in spec.constraints if isinstance(c, RateConstraint)]
    groups = (spec.objective.data.groups or {}).values() if _counts_groups(spec) else ()
    return all(c.data is None for c in rates) and all(
        readable(ref) and REGISTRY[ref.format].partitions.kind == NPY for ref in groups)


def _vector_layout(ref: DataRef, path: str, roots: Sequence[Path], settings: DataSettings,
                   rows_of: str = FEATURES) -> tuple[NpyLayout, int]:
    """The header of a separate 1-D ``npy`` file of one value per row of ``rows_of``
    (labels, weights, groups) at JSON ``path``, and the file's bytes."""
    with open_ranges(ref, path, roots, settings) as stream:
        layout = npy_layout(lambda a, b: read_range(stream, a, b), path)
        size = stream.seek(0, io.SEEK_END)
    if layout is None or len(layout.shape) != 1:
        shape = layout.shape if layout else "Fortran-ordered"
        raise DataError(path, f"found an array of shape {shape}; need a 1-D array of "
                              f"shape (n,), one value per row of {rows_of}")
    return layout, size


def readable(value: object) -> bool:
    """A reference outside the spec whose bytes can be read in ranges (no whole-file hash)."""
    return isinstance(value, DataRef) and not value.uri.startswith("data:") \
        and value.sha256 is None


def _cut(ref: DataRef, stream: BinaryIO, size: int, partition_rows: int,
         partition_bytes: int) -> dict:
    """The layout-specific fields of the plan."""
    layout = REGISTRY[ref.format].partitions.kind
    if layout == NPY:
        npy = npy_layout(lambda a, b: read_range(stream, a, b), FEATURES)
        if npy is not None:
            if len(npy.shape) != 2:
                raise DataError(FEATURES, f"found an array of shape {npy.shape}; need a 2-D "
                                          f"array of shape (rows, columns)")
            pieces = [Piece(start, min(start + partition_rows, npy.shape[0]))
                      for start in range(0, npy.shape[0], partition_rows)]
            return {"layout": NPY, "pieces": tuple(pieces), "npy": npy}
        layout = WHOLE
    if layout == ROW_GROUPS:
        return {"layout": ROW_GROUPS, "pieces": _row_groups(ref, stream, partition_rows)}
    if layout == WHOLE:
        return {"layout": WHOLE, "pieces": (Piece(0, size),)}
    begin, names = 0, ()
    header = REGISTRY[ref.format].partitions.header
    if header is not None:
        begin, names = header(read_line(stream, 0, size), ref, FEATURES)
    pieces = [Piece(start, min(start + partition_bytes, size))
              for start in range(begin, size, partition_bytes)]
    return {"layout": LINES, "pieces": tuple(pieces), "begin": begin, "names": names}


def _row_groups(ref: DataRef, stream: BinaryIO, partition_rows: int) -> tuple[Piece, ...]:
    """Consecutive row groups of at most ``partition_rows`` rows (at least one group each)."""
    try:
        group_rows = REGISTRY[ref.format].partitions.group_rows(stream)
    except Exception as exc:  # a parser of untrusted bytes fails in open-ended ways
        raise DataError(FEATURES, f"cannot read the {ref.format} footer: {exc}; check that "
                                  f"the data is a valid .{ref.format} file") from exc
    pieces, groups, first, rows = [], [], 0, 0
    for group, count in enumerate(group_rows):
        if groups and rows + count > partition_rows:
            pieces.append(Piece(first, first + rows, tuple(groups)))
            groups, first, rows = [], first + rows, 0
        groups.append(group)
        rows += count
    if groups:
        pieces.append(Piece(first, first + rows, tuple(groups)))
    return tuple(pieces)


