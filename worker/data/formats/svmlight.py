"""``svmlight`` (libsvm) reader: sparse CSR features and the labels, in two streaming passes.

The first pass counts newlines and colons to size the output exactly (an upper bound on rows
and entries), which must fit the per-job memory budget; the second parses chunks of whole
lines with the numba kernel :func:`worker.kernels.svmlight.parse_chunk`. Memory is the output
plus one chunk.

Indices are one-based unless ``zero_based`` is true; when it is omitted, a file in which no
index is 0 is taken as one-based (the rule of ``sklearn.datasets.load_svmlight_file``).
``n_features`` fixes the number of columns; without it the largest index decides.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from worker.data.formats.expansion import check_expansion
from worker.data.formats.parsed import Parsed
from worker.data.formats.record import ReadOptions
from worker.data.sizes import MAX_SIZE
from worker.errors import DataError
from worker.kernels import svmlight as kernel

#: Bytes read per chunk.
CHUNK_BYTES = 16 * 2**20

#: Number tokens the fast path leaves to numpy, converted in batches of this many.
SIDE_SLOTS = 2**16

#: Bytes :class:`_Output` holds per row (label, row pointer) and per entry (index, value).
_ROW_BYTES, _ENTRY_BYTES = 16, 12

_PROBLEMS = {
    kernel.BAD_LABEL: "the label {token!r} is not a number (each line starts with one "
                      "numeric label; multi-label files are not supported)",
    kernel.NO_COLON: "{token!r} is not an <index>:<value> pair",
    kernel.BAD_INDEX: "{token!r} has an index that is not a whole number from 0 to "
                      f"{kernel.MAX_INDEX}",
    kernel.BAD_VALUE: "{token!r} has a value that is not a number",
    kernel.TOKEN_TOO_LONG: f"the number in {{token!r}} is longer than {kernel.SIDE_WIDTH} "
                           f"characters",
}


class _Output:
    """Preallocated CSR arrays and the side buffer, filled chunk by chunk."""

    def __init__(self, rows: int, entries: int):
        self.labels = np.zeros(rows, dtype=np.float64)
        self.indptr = np.zeros(rows + 1, dtype=np.int64)
        self.indices = np.zeros(entries, dtype=np.int32)
        self.data = np.zeros(entries, dtype=np.float64)
        self.side = np.zeros((SIDE_SLOTS, kernel.SIDE_WIDTH), dtype=np.uint8)
        self.side_destination = np.zeros(SIDE_SLOTS, dtype=np.int64)
        self.side_line = np.zeros(SIDE_SLOTS, dtype=np.int64)
        self.row = self.nnz = self.line = self.n_side = 0
        self.min_index, self.max_index = kernel.MAX_INDEX, -1

    def parse(self, buf: np.ndarray, path: str) -> None:
        """Parse whole lines of ``buf``, converting the side buffer whenever it fills."""
        position = 0
        while True:
            (status, position, self.row, self.nnz, self.line, self.n_side, error_start,
             error_end, low, high) = kernel.parse_chunk(
                buf, position, self.row, self.nnz, self.line, self.labels, self.indptr,
                self.indices, self.data, self.side, self.side_destination, self.side_line,
                self.n_side)
            self.min_index, self.max_index = min(self.min_index, low), max(self.max_index, high)
            if status == kernel.SIDE_FULL:
                self.flush_side(path)
            elif status == kernel.OK:
                return
            else:
                token = bytes(buf[error_start:error_end]).decode("utf-8", "replace")
                raise DataError(path, f"line {self.line + 1}: "
                                      f"{_PROBLEMS[status].format(token=token[:60])}")

    def flush_side(self, path: str) -> None:
        """Convert the set-aside number tokens with numpy and store them where they belong."""
        count, self.n_side = self.n_side, 0
        tokens = self.side[:count].view(f"S{kernel.SIDE_WIDTH}").ravel()
        try:
            values = tokens.astype(np.float64)
        except ValueError:
            bad = next(k for k, token in enumerate(tokens) if not _parses(token))
            what = "the label" if self.side_destination[bad] < 0 else "the value"
            raise DataError(path, f"line {self.side_line[bad] + 1}: {what} "
                                  f"{tokens[bad].decode('utf-8', 'replace')[:60]!r} is not a "
                                  f"number") from None
        destination = self.side_destination[:count]
        is_label = destination < 0
        self.labels[-destination[is_label] - 1] = values[is_label]
        self.data[destination[~is_label]] = values[~is_label]


def read_svmlight(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """The file's features as CSR (rows, n_features) and its labels (rows,)."""
    output = _parsed(stream, path)
    return Parsed(_matrix(output, ref, path), output.labels[:output.row])


def read_svmlight_lines(block: bytes, path: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """Whole lines of an svmlight file (one partition, :mod:`worker.distributed.partitions`).

    Returns
    -------
    features : scipy.sparse.csr_matrix, shape (rows, largest index + 1)
        With the file's own indices: whether they are one-based is decided over the whole
        file, so they are not shifted here.
    labels : ndarray, shape (rows,)
    """
    output = _parsed(io.BytesIO(block), path)
    _check_width(output, output.max_index + 1, path)
    features = sp.csr_matrix((output.data[:output.nnz], output.indices[:output.nnz],
                              output.indptr[:output.row + 1]),
                             shape=(output.row, output.max_index + 1))
    return features, output.labels[:output.row]


def read_svmlight_block(block: bytes, names: Sequence[str], ref: ReadOptions,
                        path: str) -> Parsed:
    """:func:`read_svmlight_lines` as a line reader of the format's record (svmlight has
    no header, and its index base is settled by :func:`svmlight_columns`)."""
    features, labels = read_svmlight_lines(block, path)
    return Parsed(features, labels)


def svmlight_columns(ref: ReadOptions, first_zero: int | None, width: int, widest: int,
                     path: str) -> tuple[int, int]:
    """The index base and width of a partitioned svmlight file: one-based unless an index
    is 0 (or ``zero_based`` says), at most ``n_features`` wide.

    ``first_zero``: the global row of the first index 0 (None: no index 0); ``width``: the
    largest index + 1; ``widest``: the global row holding it.
    """
    zero_based = ref.zero_based if ref.zero_based is not None else first_zero is not None
    if not zero_based and first_zero is not None:
        raise DataError(path, f"row {first_zero} has feature index 0 but the reference "
                              f"says \"zero_based\": false; set it to true")
    base = 0 if zero_based else 1
    width = max(width - base, 0)
    if ref.n_features is not None:
        if width > ref.n_features:
            raise DataError(path, f"row {widest} has feature index {width - 1 + base}, beyond "
                                  f"n_features = {ref.n_features}; raise n_features or fix "
                                  f"the file")
        width = ref.n_features
    return base, width


def _parsed(stream: BinaryIO, path: str) -> _Output:
    """Every line of the stream parsed: counted first, so the arrays are allocated once."""
    rows, entries = _count(stream)
    check_expansion(_ROW_BYTES * rows + _ENTRY_BYTES * entries, "the svmlight file", path)
    output = _Output(rows, entries)
    stream.seek(0)
    _parse_lines(stream, output, path)
    output.flush_side(path)
    return output


def _parse_lines(stream: BinaryIO, output: _Output, path: str) -> None:
    """Feed the parser whole lines through one reused buffer (grown for very long lines)."""
    buffer = bytearray(CHUNK_BYTES)
    filled = 0
    while True:
        if filled == len(buffer):
            buffer.extend(bytes(len(buffer)))
        with memoryview(buffer) as view:
            read = stream.readinto(view[filled:])
        filled += read
        cut = filled if read == 0 else buffer.rfind(b"\n", 0, filled) + 1
        if cut:
            output.parse(np.frombuffer(buffer, dtype=np.uint8, count=cut), path)
            buffer[:filled - cut] = buffer[cut:filled]
            filled -= cut
        if read == 0:
            return


def _count(stream: BinaryIO) -> tuple[int, int]:
    """Upper bounds on rows (lines) and entries (colons) of the whole stream."""
    lines = colons = 0
    last = b"\n"
    while block := stream.read(CHUNK_BYTES):
        lines += block.count(b"\n")
        colons += block.count(b":")
        last = block[-1:]
    return lines + (last != b"\n"), colons


def _matrix(output: _Output, ref: ReadOptions, path: str) -> sp.csr_matrix:
    """The CSR matrix, with indices shifted to zero-based and the width checked."""
    indices = output.indices[:output.nnz]
    zero_based = ref.zero_based if ref.zero_based is not None else output.min_index == 0
    if not zero_based:
        if output.nnz and output.min_index == 0:
            row = _row_of(output, int(np.argmax(indices == 0)))
            raise DataError(path, f"row {row} has feature index 0 but the reference says "
                                  f"\"zero_based\": false; set it to true")
        indices -= 1
    width = output.max_index + (1 if zero_based else 0)
    _check_width(output, width, path)
    if ref.n_features is not None:
        if width > ref.n_features:
            row = _row_of(output, int(np.argmax(indices >= ref.n_features)))
            raise DataError(path, f"row {row} has feature index {output.max_index}, beyond "
                                  f"n_features = {ref.n_features}; raise n_features or fix "
                                  f"the file")
        width = ref.n_features
    return sp.csr_matrix((output.data[:output.nnz], indices, output.indptr[:output.row + 1]),
                         shape=(output.row, max(width, 0)))


def _check_width(output: _Output, width: int, path: str) -> None:
    """Refuse a feature index past the largest dimension before anything is sized by it."""
    if width > MAX_SIZE:
        row = _row_of(output, int(np.argmax(output.indices[:output.nnz] >= MAX_SIZE)))
        raise DataError(path, f"row {row} has feature index {output.max_index:,}: more than "
                              f"{MAX_SIZE:,} features (the largest dimension); hash or "
                              "renumber the features")


def _row_of(output: _Output, position: int) -> int:
    """The row holding the entry at ``position`` of the data array."""
    return int(np.searchsorted(output.indptr[:output.row + 1], position, "right")) - 1


def _parses(token: bytes) -> bool:
    """True when numpy converts the token to a float."""
    try:
        np.array([token]).astype(np.float64)
    except ValueError:
        return False
    return True
