"""``npy`` and ``npz`` readers: arrays written by numpy and sparse matrices by scipy.

A C-ordered ``.npy`` file is also read by rows (:mod:`worker.distributed.partitions`): its header
(:func:`npy_layout`) says where the data start and how long a row is, so rows
[start, stop) are one contiguous byte range.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from worker.data.formats.expansion import FLOAT64_BYTES, check_axes, check_expansion
from worker.data.formats.parsed import Parsed
from worker.data.formats.record import ReadOptions
from worker.errors import DataError

NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK"

#: Zip methods of the archives numpy and scipy write.
_NUMPY_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def read_npy(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """One array written by ``numpy.save`` (object arrays refused; a header claiming more
    values than the file holds is refused before anything is allocated)."""
    _expect_magic(stream, NPY_MAGIC, "npy", path)
    size = stream.seek(0, io.SEEK_END)
    stream.seek(0)
    check_expansion(_held_bytes(stream, size, "the file", path), "the .npy array", path)
    stream.seek(0)
    return Parsed(np.load(stream, allow_pickle=False))


def _held_bytes(stream: BinaryIO, held: int, where: str, path: str) -> int:
    """Bytes an .npy array will take once read and made float64, from its header alone;
    a header whose shape needs more bytes than the ``held`` bytes of the file (or zip member)
    is refused as forged."""
    version = np.lib.format.read_magic(stream)
    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
              else np.lib.format.read_array_header_2_0)
    shape, _, dtype = header(stream)
    count = math.prod(shape)
    claimed = count * dtype.itemsize
    if claimed > held:
        raise DataError(path, f"the .npy header claims shape {shape} ({claimed:,} bytes of "
                              f"values) but {where} holds {held:,} bytes; the file is "
                              "truncated or forged")
    return claimed + (0 if dtype == np.float64 else FLOAT64_BYTES * count)


def _check_expanded(stream: BinaryIO, path: str) -> None:
    """Refuse an npz archive that would expand past the per-job memory budget, or whose
    arrays claim more than their members hold, from the zip directory and the .npy headers
    alone: nothing is decompressed beyond the headers. Members must be stored or deflated
    (what numpy and scipy write); other methods decompress without a bound per read."""
    with zipfile.ZipFile(stream) as archive:
        members = archive.infolist()
        for member in members:
            if member.compress_type not in _NUMPY_METHODS:
                raise DataError(path, f"npz member {member.filename!r} is compressed with "
                                      f"zip method {member.compress_type}; write the archive "
                                      f"with numpy.savez, numpy.savez_compressed or "
                                      f"scipy.sparse.save_npz (stored or deflated members)")
        expanded = 0
        for member in members:
            with archive.open(member) as content:
                is_array = content.read(len(NPY_MAGIC)) == NPY_MAGIC
            if is_array:
                with archive.open(member) as again:
                    expanded += _held_bytes(again, member.file_size,
                                            f"member {member.filename!r}", path)
            else:
                expanded += member.file_size
            check_expansion(expanded, "the npz archive", path)
    stream.seek(0)


@dataclass(frozen=True)
class NpyLayout:
    """Where the rows of a C-ordered ``.npy`` array are: the data's offset, shape and type."""

    offset: int
    shape: tuple[int, ...]
    dtype: str

    @property
    def row_bytes(self) -> int:
        """Bytes of one row (one element of a 1-D array)."""
        return np.dtype(self.dtype).itemsize * math.prod(self.shape[1:])

    def rows(self, block: bytes) -> np.ndarray:
        """The rows a byte range holds, shape (rows, *shape[1:])."""
        return np.frombuffer(block, dtype=self.dtype).reshape(-1, *self.shape[1:])


def npy_layout(read: Callable[[int, int], bytes], path: str) -> NpyLayout | None:
    """The layout of a ``.npy`` file from its header, read by ``read(start, stop)``; None
    when its rows are not contiguous (Fortran order).

    Raises
    ------
    DataError
        The bytes are not an .npy array, or its elements are not real numbers.
    """
    head = read(0, 12)
    if not head.startswith(NPY_MAGIC) or len(head) < 12:
        raise DataError(path, "format is npy but the data is not an .npy array; set "
                              "\"format\" to match the data, or write it with numpy.save")
    version = head[6]
    width = 2 if version == 1 else 4
    offset = 8 + width + int.from_bytes(head[8:8 + width], "little")
    stream = io.BytesIO(read(0, offset))
    np.lib.format.read_magic(stream)
    header = (np.lib.format.read_array_header_1_0 if version == 1
              else np.lib.format.read_array_header_2_0)
    shape, fortran_order, dtype = header(stream, max_header_size=offset)
    if dtype.hasobject or dtype.kind not in "biuf":
        raise DataError(path, f"holds {dtype} values; need real numbers (float, integer or "
                              f"bool), e.g. an array saved with dtype float64")
    if fortran_order and len(shape) > 1:
        return None
    return NpyLayout(offset, tuple(int(k) for k in shape), dtype.str)


def read_npz(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """A ``scipy.sparse.save_npz`` matrix, or the array ``key`` of a ``numpy.savez`` archive."""
    _expect_magic(stream, ZIP_MAGIC, "npz", path)
    _check_expanded(stream, path)
    with np.load(stream, allow_pickle=False) as archive:
        names = archive.files
        if ref.key is not None or not {"format", "shape"} <= set(names):
            return Parsed(_npz_member(archive, ref.key, names, path))
        check_axes([int(side) for side in np.ravel(archive["shape"])],
                   "the sparse npz matrix", path)
    stream.seek(0)
    matrix = sp.load_npz(stream)
    if matrix.format in ("csr", "csc", "bsr"):
        matrix.check_format(full_check=True)  # index bounds, before any C++ routine sees it
    return Parsed(matrix)


def _expect_magic(stream: BinaryIO, magic: bytes, expected: str, path: str) -> None:
    """Refuse a stream that does not start with ``magic``, naming the format it looks like."""
    head = stream.read(len(NPY_MAGIC))
    stream.seek(0)
    if head.startswith(magic):
        return
    looks = ("an .npy array" if head.startswith(NPY_MAGIC) else
             "an .npz (zip) archive" if head.startswith(ZIP_MAGIC) else "not numpy data")
    raise DataError(path, f"format is {expected} but the data is {looks}; set \"format\" to "
                          f"match the data, or write it with numpy.save, numpy.savez or "
                          f"scipy.sparse.save_npz")


def _npz_member(archive: np.lib.npyio.NpzFile, key: str | None, names: list[str],
                path: str) -> np.ndarray:
    """The array ``key`` of a plain npz archive (or its only array when ``key`` is None)."""
    listed = ", ".join(map(repr, names[:20])) + (", ..." if len(names) > 20 else "")
    if key is None and len(names) != 1:
        raise DataError(path, f"the npz archive holds {len(names)} arrays ({listed}); set "
                              f"\"key\" to the one to use")
    key = names[0] if key is None else key
    if key not in names:
        raise DataError(path, f"the npz archive has no array {key!r}; it holds {listed}")
    member = archive[key]
    if not isinstance(member, np.ndarray):
        raise DataError(path, f"npz member {key!r} is not an .npy array; write the archive "
                              f"with numpy.savez")
    return member
