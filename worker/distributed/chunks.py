"""Reading one partition of a :class:`~worker.distributed.partitions.PartitionPlan` where it
is held, with ranged reads of its own bytes only (the layouts are described in
:mod:`worker.distributed.partitions`)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypeVar

import numpy as np
import scipy.sparse as sp

from worker.data.csr import as_csr
from worker.data.formats import REGISTRY
from worker.data.formats.expansion import expansion_budget
from worker.data.read import read_examples, read_matrix
from worker.data.refs import DataRef
from worker.distributed.partitions import (
    DATA,
    FEATURES,
    LABEL,
    NPY,
    ROW_GROUPS,
    TABLE,
    WHOLE,
    PartitionPlan,
    Piece,
)
from worker.distributed.ranges import open_ranges, read_line, read_range
from worker.errors import DataError
from worker.settings import DataSettings
from worker.tables.columns import Table as Columns
from worker.tables.lower import label_column, label_values
from worker.tables.read import read_parquet_rows

T = TypeVar("T")


class Chunk(NamedTuple):
    """A partition as read: CSR (rows, width) with the file's indices, labels (rows,) when
    the features file carries them; or, for a line its format cannot parse, no rows and
    ``problem`` (its local row, error class, path, message with ``{row}``), which the census
    raises naming the global row."""

    features: sp.csr_matrix
    labels: np.ndarray | None
    problem: tuple[int, str, str, str] | None = None


def read_chunk(plan: PartitionPlan, k: int, settings: DataSettings) -> Chunk:
    """Partition ``k``'s examples, reading only its bytes, under the job's data
    ``settings`` (sent from the driver, so every worker holds the job to one budget)."""
    piece, ref, roots = plan.pieces[k], plan.features, [Path(r) for r in plan.roots]
    if plan.layout == WHOLE:
        return _whole(plan, roots, settings)
    with open_ranges(ref, FEATURES, roots, settings) as stream, \
            expansion_budget(settings.max_job_bytes):
        if plan.layout == NPY:
            npy = plan.npy
            block = read_range(stream, npy.offset + piece.start * npy.row_bytes,
                               npy.offset + piece.stop * npy.row_bytes)
            return Chunk(as_csr(npy.rows(block), drop_zeros=True), None)
        if plan.layout == ROW_GROUPS and plan.transform is not None:
            return _raw_rows(plan, piece, stream)
        if plan.layout == ROW_GROUPS:
            where = f"{FEATURES} (row groups {piece.groups[0]}-{piece.groups[-1]})"
            read_groups = REGISTRY[ref.format].partitions.read_groups
            parsed = parsing(lambda: read_groups(stream, piece.groups, ref, where), ref, where)
            return Chunk(as_csr(parsed.values, drop_zeros=True), parsed.labels)
        block = _lines(stream, piece, plan.begin, stream.seek(0, io.SEEK_END))
    where = f"{FEATURES} (the partition at bytes {piece.start}-{piece.stop}, counting its lines)"
    read_lines = REGISTRY[ref.format].partitions.read_lines
    with expansion_budget(settings.max_job_bytes):
        try:
            parsed = read_lines(block, plan.names, ref, where)
        except DataError:
            raise
        except Exception:  # a parser of untrusted bytes fails in open-ended ways
            return _unparsed(block, lambda lines: read_lines(lines, plan.names, ref, where),
                             ref)
    return Chunk(as_csr(parsed.values, drop_zeros=True), parsed.labels)


def _raw_rows(plan: PartitionPlan, piece: Piece, stream: BinaryIO) -> Chunk:
    """A calibrated model's raw table's partition: the model's columns and the label of its
    row groups, as the model's feature rows (checked as they are computed, a bad value
    named by column and global row) and the labels."""
    where = f"{TABLE} (row groups {piece.groups[0]}-{piece.groups[-1]})"
    columns = list(dict.fromkeys([*plan.transform.columns, label_column(plan.label)]))
    raw = parsing(lambda: read_parquet_rows(stream, piece.groups, columns, where),
                  plan.features, where)
    table = Columns.of(raw, TABLE, piece.start)
    return Chunk(as_csr(plan.transform.features(table), drop_zeros=True),
                 label_values(plan.label, table, LABEL))


def _unparsed(block: bytes, parse: Callable[[bytes], Any], ref: DataRef) -> Chunk:
    """A block of lines its parser refused: the first line it refuses (the shortest prefix
    of lines that fails, by bisection), as the chunk's ``problem`` at the rows before it."""
    lines = block.splitlines(keepends=True)
    good, bad = 0, len(lines)                   # lines[:good] parse, lines[:bad] do not
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            parse(b"".join(lines[:middle]))
            good = middle
        except Exception:
            bad = middle
    rows = parse(b"".join(lines[:good])).values.shape[0] if good else 0
    try:
        parse(lines[bad - 1])
        reason = "it does not parse"
    except Exception as exc:
        reason = str(exc).rstrip(".")
    text = lines[bad - 1].decode("utf-8", "replace").strip()[:80]
    return Chunk(sp.csr_matrix((0, 0)), None,
                 (rows, "data", FEATURES, f"row {{row}} ({text!r}) cannot be read as "
                                          f"{ref.format}: {reason}"))


def _whole(plan: PartitionPlan, roots: list[Path], settings: DataSettings) -> Chunk:
    """The one partition of a file that is not cut, with its labels when it carries them
    (the plan has no separate labels file then)."""
    if plan.labels is not None:
        features = read_matrix(plan.features, FEATURES, roots=roots, settings=settings)
        return Chunk(as_csr(features, drop_zeros=True), None)
    features, labels = read_examples(plan.features, None, DATA, roots=roots, settings=settings)
    return Chunk(as_csr(features, drop_zeros=True), labels)


def _lines(stream: BinaryIO, piece: Piece, begin: int, size: int) -> bytes:
    """The whole lines of a line-cut partition: from the first line starting in
    [start, stop) through the line holding ``stop``."""
    block = read_range(stream, piece.start, piece.stop)
    if piece.start > begin:
        newline = block.find(b"\n")
        if newline < 0:
            return b""  # no line starts here: the previous partition reads through stop
        block = block[newline + 1:]
    return block + read_line(stream, piece.stop, size)


def parsing(read: Callable[[], T], ref: DataRef, where: str) -> T:
    """Run a parser of untrusted bytes; what it throws beyond DataError becomes one."""
    try:
        return read()
    except DataError:
        raise
    except Exception as exc:
        raise DataError(where, f"cannot read the data as {ref.format}: "
                               f"{str(exc).rstrip('.')}") from exc

