"""Byte ranges of a referenced file, read without fetching the rest (HTTP ``Range``
requests, S3 ranged GETs, ``pread`` on local files): what the partition planner and the
partition readers share."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from worker.data.formats.numpy_files import NpyLayout
from worker.data.refs import DataRef
from worker.data.sources import open_source
from worker.settings import DataSettings

#: First read when looking for the end of a line; every further read doubles.
TAIL_BYTES = 4096


def open_ranges(ref: DataRef, path: str, roots: Sequence[Path],
                settings: DataSettings) -> AbstractContextManager[BinaryIO]:
    """The ranged stream of a policy-checked reference (``path``: its JSON path)."""
    return open_source(ref.uri, path, roots, settings).open_ranges()


def read_range(stream: BinaryIO, start: int, stop: int) -> bytes:
    """Bytes [start, stop) of the stream (fewer at its end)."""
    stream.seek(start)
    parts, wanted = [], stop - start
    while wanted > 0 and (part := stream.read(wanted)):
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts)


def vector_rows(ref: DataRef, layout: NpyLayout, path: str, roots: Sequence[str],
                offset: int, rows: int, settings: DataSettings) -> np.ndarray:
    """Rows [offset, offset + rows) of a 1-D ``npy`` file of ``layout`` at JSON ``path``,
    shape (rows,), read with one ranged read (a separate labels or weights file)."""
    with open_ranges(ref, path, [Path(r) for r in roots], settings) as stream:
        block = read_range(stream, layout.offset + offset * layout.row_bytes,
                           layout.offset + (offset + rows) * layout.row_bytes)
    return layout.rows(block)


def read_line(stream: BinaryIO, start: int, size: int) -> bytes:
    """From ``start`` through the first newline at or after it (or the end of the data, at
    ``size``), read in growing steps from :data:`TAIL_BYTES`."""
    parts, position, step = [], start, TAIL_BYTES
    while position < size:
        part = read_range(stream, position, min(position + step, size))
        end = part.find(b"\n")
        if end >= 0:
            parts.append(part[:end + 1])
            break
        parts.append(part)
        position, step = position + len(part), 2 * step
    return b"".join(parts)
