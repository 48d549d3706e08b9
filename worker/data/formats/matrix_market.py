"""``mtx`` reader: Matrix Market files through scipy's fast_matrix_market parser."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, BinaryIO

import scipy.io

from worker.data.formats.parsed import Parsed
from worker.errors import DataError

if TYPE_CHECKING:
    from worker.data.refs import DataRef

#: Bytes at the end of a file searched for its last line.
_TAIL_BYTES = 4096


def read_mtx(stream: BinaryIO, ref: DataRef, path: str) -> Parsed:
    """A coordinate file as a COO matrix (symmetry expanded), an array file as an ndarray."""
    _check_last_line(stream, path)
    return Parsed(scipy.io.mmread(stream))


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
