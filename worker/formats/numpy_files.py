"""``npy`` and ``npz`` readers: arrays written by numpy and sparse matrices by scipy."""

from __future__ import annotations

from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from worker.errors import DataError
from worker.formats.parsed import Parsed
from worker.refs import DataRef

NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK"


def read_npy(stream: BinaryIO, ref: DataRef, path: str) -> Parsed:
    """One array written by ``numpy.save`` (object arrays refused)."""
    _expect_magic(stream, NPY_MAGIC, "npy", path)
    return Parsed(np.load(stream, allow_pickle=False))


def read_npz(stream: BinaryIO, ref: DataRef, path: str) -> Parsed:
    """A ``scipy.sparse.save_npz`` matrix, or the array ``key`` of a ``numpy.savez`` archive."""
    _expect_magic(stream, ZIP_MAGIC, "npz", path)
    with np.load(stream, allow_pickle=False) as archive:
        names = archive.files
        if ref.key is not None or not {"format", "shape"} <= set(names):
            return Parsed(_npz_member(archive, ref.key, names, path))
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
