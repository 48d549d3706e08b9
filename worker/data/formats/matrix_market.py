"""``mtx`` reader: Matrix Market files through scipy's fast_matrix_market parser, once the
header's shape and entry count are checked against the file and the per-job memory budget."""

from __future__ import annotations

import io
from typing import BinaryIO

import scipy.io

from worker.data.formats.expansion import FLOAT64_BYTES, check_axes, check_expansion
from worker.data.formats.parsed import Parsed
from worker.data.formats.record import ReadOptions
from worker.errors import DataError

#: Bytes at the end of a file searched for its last line.
_TAIL_BYTES = 4096

#: Bytes of one coordinate entry: row, column (int64) and value (float64).
_ENTRY_BYTES = 24

#: The shortest line of a coordinate entry: ``1 1\n`` (a pattern matrix).
_MIN_ENTRY_LINE = 4


def read_mtx(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """A coordinate file as a COO matrix (symmetry expanded), an array file as an ndarray."""
    _check_last_line(stream, path)
    _check_claim(stream, path)
    return Parsed(scipy.io.mmread(stream))


def _check_claim(stream: BinaryIO, path: str) -> None:
    """Refuse a header whose shape or entry count the file cannot hold or the per-job
    memory budget cannot take, before the parser allocates for it."""
    size = stream.seek(0, io.SEEK_END)
    stream.seek(0)
    header = _header(stream)
    stream.seek(0)
    if header is None:
        return  # not a header this check understands: the parser refuses it
    rows, columns, entries, layout, symmetry = header
    check_axes((rows, columns), "the Matrix Market header", path)
    if layout == "array":
        check_expansion(FLOAT64_BYTES * rows * columns, "the Matrix Market array", path)
        return
    if entries * _MIN_ENTRY_LINE > size:
        raise DataError(path, f"the Matrix Market header claims {entries:,} entries but the "
                              f"file holds {size:,} bytes; the file is truncated or forged")
    copies = 1 if symmetry == "general" else 2
    check_expansion(copies * entries * _ENTRY_BYTES, "the Matrix Market file", path)


def _header(stream: BinaryIO) -> tuple[int, int, int, str, str] | None:
    """Rows, columns, entries (of a coordinate file), layout and symmetry from the banner
    and size line; None when they cannot be read."""
    banner = stream.readline(_TAIL_BYTES).decode("latin-1").lower().split()
    if len(banner) != 5 or banner[0] != "%%matrixmarket":
        return None
    line = "%"
    while line.startswith("%") or not line.strip():
        line = stream.readline(_TAIL_BYTES).decode("latin-1")
        if not line:
            return None
    sizes = line.split()
    if not all(size.isdigit() for size in sizes) or len(sizes) != (2 if banner[2] == "array"
                                                                   else 3):
        return None
    rows, columns, *entries = map(int, sizes)
    return rows, columns, entries[0] if entries else rows * columns, banner[2], banner[4]


def _check_last_line(stream: BinaryIO, path: str) -> None:
    """Refuse a file whose last entry line is cut mid-number (the parser would accept it)."""
    size = stream.seek(0, io.SEEK_END)
    stream.seek(max(0, size - _TAIL_BYTES))
    tail = stream.read().decode("latin-1").rstrip()
    stream.seek(0)
    last = tail.rsplit("\n", 1)[-1].strip()
    if not last or last.startswith("%"):
        return
    try:
        [float(token) for token in last.split()]
    except ValueError:
        raise DataError(path, f"the last line of the Matrix Market file ({last[:60]!r}) is "
                              f"not a row of numbers; the file looks truncated or "
                              f"malformed") from None
