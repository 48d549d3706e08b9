"""An objective's examples read partition by partition, each by whoever holds it (SVRG OL's
data-parallel batch phase, Cutkosky & Busa-Fekete §8.2).

A :class:`PartitionPlan` is made on the job's driver without parsing the data: it reads
only headers and metadata, through the same sources as every reference (data roots, the
http(s) address policy, the byte cap; :func:`worker.data.sources.open_source`). Partition ``k``
is then read by :func:`read_chunk` with ranged reads of its own bytes:

=============  ==================================================================================
format         partition
=============  ==================================================================================
``npy``        ``partition_rows`` consecutive rows: one byte range after the header (C order)
``parquet``    consecutive row groups of at most ``partition_rows`` rows (one group at least)
``svmlight``   about ``partition_bytes`` bytes cut at line boundaries: partition k > 0 starts
``csv``        after the first newline at or after its start offset and every partition ends
               with the line holding its end offset (csv: after the header line; quoted
               fields must not hold newlines)
``npz``,       one partition, read whole by one worker (the formats are not splittable);
``mtx``        so is a Fortran-ordered ``npy``
=============  ==================================================================================

Labels come from the features file (svmlight; csv/parquet with ``label_column``) or from a
separate 1-D ``npy`` file, whose rows [offset, offset + rows) a partition reads once the
census has fixed its offset. Rows keep the file's order: global row = partition offset +
local row.

The census (:func:`census_of`, :func:`settle`) is the first round: every partition reports
its row count, width, and the first row that breaks a rule; the driver turns them into
offsets, the index base and the width d, and raises errors that name the global row.
:func:`finish` then gives a partition's :class:`~worker.kernels.svrg.Rows`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
import scipy.sparse as sp

from worker.data.formats import REGISTRY
from worker.data.formats.numpy_files import NpyLayout, npy_layout
from worker.data.formats.svmlight import read_svmlight_lines
from worker.data.formats.tabular import csv_names, read_csv_lines
from worker.data.labels import LABELS, label_problem, raise_problem, signed_labels
from worker.data.read import read_matrix
from worker.data.refs import DataRef
from worker.data.settings import DataSettings
from worker.data.sources import open_source
from worker.errors import DataError, SpecError
from worker.kernels.svrg import Rows
from worker.problem.compiled import LOSS_CODES
from worker.spec.models import EmpiricalRisk, RateConstraint, Spec

#: Bytes of an svmlight or csv partition when ``LIGHTTOUCH_PARTITION_BYTES`` is not set.
DEFAULT_PARTITION_BYTES = 2**26

#: First read when looking for the end of a line; every further read doubles.
TAIL_BYTES = 4096

FEATURES = "objective.data.features"

#: How a format is cut (:class:`worker.data.formats.Partitioning`).
LINES, NPY, ROW_GROUPS, WHOLE = "lines", "npy", "row_groups", "whole"


@dataclass(frozen=True)
class Piece:
    """One partition: bytes [start, stop) (lines), rows [start, stop) (npy), row groups."""

    start: int
    stop: int
    groups: tuple[int, ...] = ()


@dataclass(frozen=True)
class PartitionPlan:
    """How an objective's examples are cut, and what reading a partition needs.

    ``names`` are a csv file's columns, ``begin`` the first byte after its header; ``npy``
    and ``label_npy`` the layouts of the features and of a separate labels file.
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

    @property
    def kind(self) -> int:
        """The loss code (:mod:`worker.problem.compiled`)."""
        return LOSS_CODES[self.loss]


class Chunk(NamedTuple):
    """A partition as read: CSR (rows, width) with the file's indices, labels (rows,) when
    the features file carries them."""

    features: sp.csr_matrix
    labels: np.ndarray | None


@dataclass(frozen=True)
class Census:
    """What one partition reports in the census round.

    ``first_zero`` / ``widest`` are local rows of the first entry with index 0 and of the
    largest index (-1: none); ``problem`` is (local row, error class, path, message) of the
    first bad value, path and message formatted with ``row=<global row>``.
    """

    rows: int
    width: int
    first_zero: int
    widest: int
    problem: tuple[int, str, str, str] | None


@dataclass(frozen=True)
class Settled:
    """The census's outcome: n, partition offsets (P,), index base (0 or 1), width d."""

    n: int
    offsets: tuple[int, ...]
    base: int
    width: int


# -- the plan (on the driver) --------------------------------------------------------------

def plan_partitions(spec: Spec, roots: Sequence[Path], partition_rows: int,
                    partition_bytes: int,
                    settings: DataSettings | None = None) -> PartitionPlan | None:
    """The plan for an svrg_ol objective whose examples are references workers can read;
    None when the driver must read them itself (inline values, ``data:`` URIs, ``sha256``,
    ``pairwise_hinge``, rate constraints, labels neither in the features file nor ``npy``).
    """
    objective = spec.objective
    if spec.solver.algorithm != "svrg_ol" or not isinstance(objective, EmpiricalRisk) \
            or objective.loss == "pairwise_hinge" \
            or any(isinstance(c, RateConstraint) for c in spec.constraints):
        return None
    features, labels = objective.data.features, objective.data.labels
    carried = isinstance(features, DataRef) and REGISTRY[features.format].carries_labels(features)
    if not (_readable(features) and (_readable(labels) and labels.format == "npy"
                                     if labels is not None else carried)):
        return None
    settings = settings if settings is not None else DataSettings()
    with _open(features, FEATURES, roots, settings) as stream:
        size = stream.seek(0, io.SEEK_END)
        plan = _cut(features, stream, size, partition_rows, partition_bytes)
    label_npy = None
    if labels is not None:
        with _open(labels, LABELS, roots, settings) as stream:
            label_npy = npy_layout(lambda a, b: _read(stream, a, b), LABELS)
            size += stream.seek(0, io.SEEK_END)
        if label_npy is None or len(label_npy.shape) != 1:
            shape = label_npy.shape if label_npy else "Fortran-ordered"
            raise DataError(LABELS, f"found an array of shape {shape}; need a 1-D array of "
                                    f"shape (n,)")
    return PartitionPlan(features=features, labels=labels, loss=objective.loss,
                         roots=tuple(str(root) for root in roots), size=size,
                         label_npy=label_npy, **plan)


def _readable(value: object) -> bool:
    """A reference outside the spec whose bytes can be read in ranges (no whole-file hash)."""
    return isinstance(value, DataRef) and not value.uri.startswith("data:") \
        and value.sha256 is None


def _cut(ref: DataRef, stream: BinaryIO, size: int, partition_rows: int,
         partition_bytes: int) -> dict:
    """The layout-specific fields of the plan."""
    layout = REGISTRY[ref.format].partitions.kind
    if layout == NPY:
        npy = npy_layout(lambda a, b: _read(stream, a, b), FEATURES)
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
    if ref.format == "csv":
        header = _line(stream, 0, size)
        names = tuple(csv_names(io.BytesIO(header), ref.header, FEATURES))
        begin = len(header) if ref.header else 0
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


# -- reading one partition (on a worker) ---------------------------------------------------

def read_chunk(plan: PartitionPlan, k: int, settings: DataSettings | None = None) -> Chunk:
    """Partition ``k``'s examples, reading only its bytes (module docstring)."""
    settings = settings if settings is not None else DataSettings()
    piece, ref = plan.pieces[k], plan.features
    if plan.layout == WHOLE:
        matrix = read_matrix(ref, FEATURES, roots=[Path(r) for r in plan.roots],
                             settings=settings)
        return Chunk(_canonical(matrix), None)
    with _open(ref, FEATURES, [Path(r) for r in plan.roots], settings) as stream:
        if plan.layout == NPY:
            npy = plan.npy
            block = _read(stream, npy.offset + piece.start * npy.row_bytes,
                          npy.offset + piece.stop * npy.row_bytes)
            return Chunk(_canonical(npy.rows(block)), None)
        if plan.layout == ROW_GROUPS:
            where = f"{FEATURES} (row groups {piece.groups[0]}-{piece.groups[-1]})"
            read_groups = REGISTRY[ref.format].partitions.read_groups
            parsed = _parsing(lambda: read_groups(stream, piece.groups, ref, where), ref, where)
            return Chunk(_canonical(parsed.values), parsed.labels)
        block = _lines(stream, piece, plan.begin, plan.size)
    where = f"{FEATURES} (the partition at bytes {piece.start}-{piece.stop}, counting its lines)"
    if ref.format == "svmlight":
        features, labels = read_svmlight_lines(block, where)
        return Chunk(_canonical(features), labels)
    parsed = _parsing(lambda: read_csv_lines(block, plan.names, ref, where), ref, where)
    return Chunk(_canonical(parsed.values), parsed.labels)


def _open(ref: DataRef, path: str, roots: Sequence[Path], settings: DataSettings):
    """The ranged stream of a policy-checked reference."""
    return open_source(ref.uri, path, roots, settings).open_ranges()


def _read(stream: BinaryIO, start: int, stop: int) -> bytes:
    """Bytes [start, stop) of the stream (fewer at its end)."""
    stream.seek(start)
    parts, wanted = [], stop - start
    while wanted > 0 and (part := stream.read(wanted)):
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts)


def _line(stream: BinaryIO, start: int, size: int) -> bytes:
    """From ``start`` through the first newline at or after it (or the end of the data),
    read in growing steps from :data:`TAIL_BYTES`."""
    parts, position, step = [], start, TAIL_BYTES
    while position < size:
        part = _read(stream, position, min(position + step, size))
        end = part.find(b"\n")
        if end >= 0:
            parts.append(part[:end + 1])
            break
        parts.append(part)
        position, step = position + len(part), 2 * step
    return b"".join(parts)


def _lines(stream: BinaryIO, piece: Piece, begin: int, size: int) -> bytes:
    """The whole lines of a line-cut partition (module docstring)."""
    block = _read(stream, piece.start, piece.stop)
    if piece.start > begin:
        newline = block.find(b"\n")
        if newline < 0:
            return b""  # no line starts here: the previous partition reads through stop
        block = block[newline + 1:]
    return block + _line(stream, piece.stop, size)


def _parsing(read, ref: DataRef, where: str):
    """Run a parser of untrusted bytes; what it throws beyond DataError becomes one."""
    try:
        return read()
    except DataError:
        raise
    except Exception as exc:
        raise DataError(where, f"cannot read the data as {ref.format}: "
                               f"{str(exc).rstrip('.')}") from exc


def _canonical(values) -> sp.csr_matrix:
    """Float64 CSR with sorted indices, duplicates summed and no stored zeros."""
    with np.errstate(over="ignore", invalid="ignore"):
        csr = sp.csr_matrix(values, dtype=np.float64)
    csr.sum_duplicates()
    csr.eliminate_zeros()
    return csr


# -- the census -----------------------------------------------------------------------------

def census_of(chunk: Chunk, loss: str) -> Census:
    """One partition's counts and its first bad value (module docstring)."""
    features, labels = chunk.features, chunk.labels
    indices = features.indices
    first_zero = _row_of(features, int(np.argmax(indices == 0))) \
        if indices.size and indices.min() == 0 else -1
    widest = _row_of(features, int(np.argmax(indices))) if indices.size else -1
    problem = None
    bad = np.flatnonzero(~np.isfinite(features.data))
    if bad.size:
        k = int(bad[0])
        problem = (_row_of(features, k), "data", FEATURES,
                   f"row {{row}} column {indices[k]} is {features.data[k]}; every value must "
                   f"be finite: replace or drop NaN and infinite entries")
    elif labels is not None:
        problem = label_problem(labels, loss, FEATURES)
    return Census(rows=features.shape[0], width=features.shape[1], first_zero=first_zero,
                  widest=widest, problem=problem)


def column_counts(chunk: Chunk) -> np.ndarray:
    """#{i : x_ij != 0} per column j of the file's indices, shape (width,)."""
    return np.bincount(chunk.features.indices, minlength=chunk.features.shape[1])


def add_counts(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Sum two count vectors of possibly different lengths."""
    if left.size < right.size:
        left, right = right, left
    total = left.copy()
    total[:right.size] += right
    return total


def settle(plan: PartitionPlan, censuses: Sequence[Census]) -> Settled:
    """Offsets, index base and width from every partition's census; the first problem in
    file order raised with its global row."""
    offsets = np.concatenate([[0], np.cumsum([c.rows for c in censuses], dtype=np.int64)])
    for offset, census in zip(offsets, censuses, strict=False):
        if census.problem is not None:
            raise_problem(census.problem, int(offset) + census.problem[0])
    n = int(offsets[-1])
    if n == 0:
        raise SpecError.at(FEATURES, "no examples; give at least one row")
    if plan.label_npy is not None and plan.label_npy.shape[0] != n:
        raise SpecError.at(LABELS, f"{plan.label_npy.shape[0]} labels for {n} feature rows; "
                                   f"give one label per row")
    width = max(c.width for c in censuses)
    ref = plan.features
    if ref.format != "svmlight":
        return Settled(n, tuple(int(o) for o in offsets[:-1]), 0, width)
    zeros = [int(o) + c.first_zero for o, c in zip(offsets, censuses, strict=False)
             if c.first_zero >= 0]
    zero_based = ref.zero_based if ref.zero_based is not None else bool(zeros)
    if not zero_based and zeros:
        raise DataError(FEATURES, f"row {zeros[0]} has feature index 0 but the reference "
                                  f"says \"zero_based\": false; set it to true")
    base = 0 if zero_based else 1
    width = max(width - base, 0)
    if ref.n_features is not None:
        if width > ref.n_features:
            k = max(range(len(censuses)), key=lambda p: (censuses[p].width, -p))
            raise DataError(FEATURES, f"row {int(offsets[k]) + censuses[k].widest} has "
                                      f"feature index {width - 1 + base}, beyond n_features = "
                                      f"{ref.n_features}; raise n_features or fix the file")
        width = ref.n_features
    return Settled(n, tuple(int(o) for o in offsets[:-1]), base, width)


def finish(plan: PartitionPlan, chunk: Chunk, offset: int, base: int,
           settings: DataSettings | None = None) -> Rows:
    """A read partition as the batch kernels' rows: zero-based indices, labels checked and
    0 read as -1 for hinge and logistic, ``first_row`` = ``offset``."""
    features, labels = chunk.features, chunk.labels
    if labels is None:
        labels = _label_rows(plan, offset, features.shape[0], settings)
    return Rows(kind=np.int64(plan.kind), indptr=features.indptr.astype(np.int64),
                indices=features.indices.astype(np.int64) - base,
                data=np.ascontiguousarray(features.data, dtype=np.float64),
                labels=np.ascontiguousarray(signed_labels(labels, plan.loss),
                                            dtype=np.float64),
                first_row=np.int64(offset))


def _label_rows(plan: PartitionPlan, offset: int, rows: int,
                settings: DataSettings | None) -> np.ndarray:
    """Rows [offset, offset + rows) of the separate labels file, checked."""
    settings = settings if settings is not None else DataSettings()
    layout = plan.label_npy
    with _open(plan.labels, LABELS, [Path(r) for r in plan.roots], settings) as stream:
        block = _read(stream, layout.offset + offset * layout.row_bytes,
                      layout.offset + (offset + rows) * layout.row_bytes)
    labels = layout.rows(block).astype(np.float64)
    problem = label_problem(labels, plan.loss, LABELS)
    if problem is not None:
        raise_problem(problem, offset + problem[0])
    return labels


def _row_of(features: sp.csr_matrix, position: int) -> int:
    """The row holding the entry at ``position`` of the data array."""
    return int(np.searchsorted(features.indptr, position, side="right")) - 1
