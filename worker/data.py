"""Read the ``<matrix>`` and ``<vector>`` values of a spec into float64 arrays.

Inline values are converted directly. A :class:`~worker.refs.DataRef` goes through two
tables: :data:`OPENERS` (URI scheme -> a function returning a binary stream) and
:data:`READERS` (format -> a function parsing that stream). New schemes (``http``, ``s3``)
and formats (``csv``, ``parquet``, ``svmlight``, ``mtx``) are new entries there; both are
checked before anything is opened. A ``file://`` path is resolved (symlinks too) and must
lie inside one of the data roots the caller passes, so the URI never reaches a library
unchecked.

Every failure is a :class:`~worker.errors.DataError` whose message starts with the JSON
path of the value, then says what is wrong and what to fix.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, unquote_to_bytes, urlsplit

import numpy as np
import scipy.sparse as sp

from worker.errors import DataError
from worker.refs import CooMatrix, DataRef, MatrixValue, VectorValue, parse_data_uri, uri_scheme

Opener = Callable[[str, str, Sequence[Path]], BinaryIO]
Reader = Callable[[BinaryIO, DataRef, str], np.ndarray | sp.spmatrix | sp.sparray]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK"

#: Element kinds accepted as numbers: bool, signed and unsigned integer, floating point.
_REAL_KINDS = "biuf"


def data_roots_from_env() -> list[Path]:
    """Directories ``file://`` URIs may read: ``LIGHTTOUCH_DATA_ROOTS`` split on ``:``, else cwd."""
    entries = os.environ.get("LIGHTTOUCH_DATA_ROOTS", "").split(":")
    return [Path(entry).resolve() for entry in entries if entry] or [Path.cwd()]


def read_matrix(value: MatrixValue, path: str, *,
                roots: Sequence[Path]) -> np.ndarray | sp.csr_matrix:
    """A 2-D float64 matrix: dense ndarray, or CSR (canonical, duplicates summed) when sparse.

    Parameters
    ----------
    value : MatrixValue
        Inline rows, a :class:`CooMatrix` or a :class:`DataRef` (validated models).
    path : str
        JSON path of the value in the spec, e.g. ``objective.data.features``.
    roots : sequence of Path
        Directories ``file://`` URIs may read (see :func:`data_roots_from_env`).

    Raises
    ------
    DataError
        The value cannot be read, is not 2-D, or holds a non-finite number.
    """
    if isinstance(value, CooMatrix):
        matrix = sp.coo_matrix((np.asarray(value.data, dtype=np.float64),
                                (np.asarray(value.row, dtype=np.int64),
                                 np.asarray(value.col, dtype=np.int64))), shape=value.shape)
    elif isinstance(value, DataRef):
        matrix = _load(value, path, roots)
    else:
        matrix = _inline_rows(value, path)
    if sp.issparse(matrix):
        return _csr(matrix, path)
    array = _as_float(matrix, path)
    if array.ndim != 2:
        raise DataError(path, f"found an array of shape {array.shape}; need a 2-D array of "
                              f"shape (rows, columns)")
    bad = _first_nonfinite(array)
    if bad is not None:
        row, col = np.unravel_index(bad, array.shape)
        raise DataError(path, _nonfinite(f"row {row} column {col}", array[row, col]))
    return array


def read_vector(value: VectorValue, path: str, *, roots: Sequence[Path]) -> np.ndarray:
    """A 1-D float64 array from an inline list or a :class:`DataRef` (see :func:`read_matrix`)."""
    vector = _load(value, path, roots) if isinstance(value, DataRef) else np.asarray(value)
    if sp.issparse(vector):
        raise DataError(path, f"found a sparse matrix of shape {vector.shape}; need a dense "
                              f"1-D array of shape (n,), e.g. written by numpy.save")
    array = _as_float(vector, path)
    if array.ndim != 1:
        raise DataError(path, f"found an array of shape {array.shape}; need a 1-D array of "
                              f"shape (n,)")
    bad = _first_nonfinite(array)
    if bad is not None:
        raise DataError(path, _nonfinite(f"index {bad}", array[bad]))
    return array


def _inline_rows(rows: list[list[float]], path: str) -> np.ndarray:
    """Inline nested lists as a dense array; every row needs the same length."""
    width = len(rows[0]) if rows else 0
    for r, row in enumerate(rows):
        if len(row) != width:
            raise DataError(path, f"row {r} has length {len(row)} but row 0 has length "
                                  f"{width}; a dense matrix must be rectangular")
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def _as_float(array: np.ndarray, path: str) -> np.ndarray:
    """The array as float64; refuses element types that are not real numbers."""
    if array.dtype.kind not in _REAL_KINDS:
        raise DataError(path, f"holds {array.dtype} values; need real numbers (float, integer "
                              f"or bool), e.g. an array saved with dtype float64")
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-range values become inf
        return array.astype(np.float64, copy=False)


def _csr(matrix: sp.spmatrix | sp.sparray, path: str) -> sp.csr_matrix:
    """Any 2-D scipy sparse matrix as canonical float64 CSR with finite entries."""
    if matrix.ndim != 2:
        raise DataError(path, f"found a sparse array of shape {matrix.shape}; need a 2-D "
                              f"matrix of shape (rows, columns)")
    if matrix.dtype.kind not in _REAL_KINDS:
        raise DataError(path, f"holds {matrix.dtype} values; need real numbers (float, integer "
                              f"or bool)")
    with np.errstate(over="ignore", invalid="ignore"):
        csr = sp.csr_matrix(matrix, dtype=np.float64)
    csr.sum_duplicates()
    bad = _first_nonfinite(csr.data)
    if bad is not None:
        row = int(np.searchsorted(csr.indptr, bad, side="right")) - 1
        raise DataError(path, _nonfinite(f"row {row} column {csr.indices[bad]}", csr.data[bad]))
    return csr


def _first_nonfinite(values: np.ndarray) -> int | None:
    """Flat (C-order) index of the first NaN or infinity, or None."""
    bad = ~np.isfinite(values)
    return int(np.argmax(bad)) if bad.any() else None


def _nonfinite(where: str, value: float) -> str:
    """The message for a non-finite number at ``where``."""
    return (f"{where} is {float(value)}; every value must be finite: replace or drop NaN "
            f"and infinite entries")


def _load(ref: DataRef, path: str,
          roots: Sequence[Path]) -> np.ndarray | sp.spmatrix | sp.sparray:
    """Open the reference's URI, verify its sha256 and parse it with its format's reader."""
    scheme = uri_scheme(ref.uri)
    opener = OPENERS.get(scheme)
    if opener is None:
        found = f"scheme {scheme}:" if scheme else "no scheme"
        raise DataError(path, f"{_brief(ref.uri)} has {found}, which this build cannot read "
                              f"yet; supported now: {', '.join(s + ':' for s in OPENERS)} "
                              f"(file:///absolute/path under a data root)")
    reader = READERS.get(ref.format)
    if reader is None:
        raise DataError(path, f"format {ref.format} cannot be read by this build yet; "
                              f"supported now: {', '.join(READERS)} (convert the data with "
                              f"numpy.save, numpy.savez or scipy.sparse.save_npz)")
    with opener(ref.uri, path, roots) as stream:
        try:
            if ref.sha256 is not None:
                _verify_sha256(stream, ref.sha256, path)
            return reader(stream, ref, path)
        except DataError:
            raise
        except Exception as exc:  # parsers of untrusted bytes fail in open-ended ways
            raise DataError(path, f"cannot read {_brief(ref.uri)} as {ref.format}: "
                                  f"{str(exc).rstrip('.')}; "
                                  f"check that the data is a valid .{ref.format} "
                                  f"file") from exc


def _verify_sha256(stream: BinaryIO, expected: str, path: str) -> None:
    """Compare the stream's SHA-256 with ``expected``, then rewind the stream."""
    actual = hashlib.file_digest(stream, "sha256").hexdigest()
    stream.seek(0)
    if actual != expected:
        raise DataError(path, f"sha256 mismatch: the data hashes to {actual} but the "
                              f"reference says {expected}; fix \"sha256\" or the data")


def _brief(uri: str) -> str:
    """The URI for a message: a data: URI by its kind only, others quoted and truncated."""
    if uri_scheme(uri) == "data":
        return "the data: URI"
    return repr(uri if len(uri) <= 120 else uri[:117] + "...")


# -- openers: URI -> binary stream -------------------------------------------------------------

def _open_data(uri: str, path: str, roots: Sequence[Path]) -> BinaryIO:
    """The bytes of an RFC 2397 ``data:`` URI (base64 or percent-encoded payload)."""
    try:
        parts = parse_data_uri(uri)
        raw = unquote_to_bytes(parts.payload)
        return io.BytesIO(base64.b64decode(b"".join(raw.split()), validate=True)
                          if parts.base64 else raw)
    except ValueError as exc:
        raise DataError(path, f"cannot decode the data: URI ({exc}); write "
                              f"data:[<media type>][;base64],<payload> with a standard base64 "
                              f"or percent-encoded payload") from exc


def _open_file(uri: str, path: str, roots: Sequence[Path]) -> BinaryIO:
    """A file named by an absolute ``file://`` URI that resolves inside one of ``roots``."""
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise DataError(path, f"malformed URI {_brief(uri)}: {exc}") from exc
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise DataError(path, f"{_brief(uri)} names a host, query or fragment; write "
                              f"file:///absolute/path/to/data.npy")
    target = unquote(parts.path)
    if not target.startswith("/"):
        raise DataError(path, f"{_brief(uri)} does not hold an absolute path; write "
                              f"file:///absolute/path/to/data.npy")
    if "\0" in target:
        raise DataError(path, f"{_brief(uri)} contains a NUL character, which is refused")
    if ".." in target.split("/"):
        raise DataError(path, f"{_brief(uri)} contains a '..' segment, which is refused; name "
                              f"the file by its plain absolute path under a data root")
    try:
        resolved = Path(target).resolve()
        allowed = [Path(root).resolve() for root in roots]
    except (OSError, RuntimeError) as exc:  # e.g. a symlink loop
        raise DataError(path, f"cannot resolve {_brief(uri)}: {exc}") from exc
    if not any(resolved.is_relative_to(root) for root in allowed):
        raise DataError(path, f"{_brief(uri)} is outside the data roots "
                              f"({', '.join(map(str, allowed)) or 'none configured'}); move the "
                              f"file under a data root or add its directory to "
                              f"LIGHTTOUCH_DATA_ROOTS")
    try:
        if not resolved.is_file():
            raise DataError(path, f"{_brief(uri)} is not an existing regular file under the "
                                  f"data roots; check the path")
        return open(resolved, "rb")  # the caller closes it
    except OSError as exc:
        raise DataError(path, f"cannot open {_brief(uri)}: {exc.strerror}") from exc


#: URI scheme -> opener. Checked before any reader runs.
OPENERS: dict[str, Opener] = {"data": _open_data, "file": _open_file}


# -- readers: binary stream -> array -----------------------------------------------------------

def _read_npy(stream: BinaryIO, ref: DataRef, path: str) -> np.ndarray:
    """One array written by ``numpy.save`` (object arrays refused)."""
    _expect_magic(stream, _NPY_MAGIC, "npy", path)
    return np.load(stream, allow_pickle=False)


def _read_npz(stream: BinaryIO, ref: DataRef,
              path: str) -> np.ndarray | sp.spmatrix | sp.sparray:
    """A ``scipy.sparse.save_npz`` matrix, or the array ``key`` of a ``numpy.savez`` archive."""
    _expect_magic(stream, _ZIP_MAGIC, "npz", path)
    with np.load(stream, allow_pickle=False) as archive:
        names = archive.files
        if ref.key is not None or not {"format", "shape"} <= set(names):
            return _npz_member(archive, ref.key, names, path)
    stream.seek(0)
    matrix = sp.load_npz(stream)
    if matrix.format in ("csr", "csc", "bsr"):
        matrix.check_format(full_check=True)  # index bounds, before any C++ routine sees it
    return matrix


def _expect_magic(stream: BinaryIO, magic: bytes, expected: str, path: str) -> None:
    """Refuse a stream that does not start with ``magic``, naming the format it looks like."""
    head = stream.read(len(_NPY_MAGIC))
    stream.seek(0)
    if head.startswith(magic):
        return
    looks = ("an .npy array" if head.startswith(_NPY_MAGIC) else
             "an .npz (zip) archive" if head.startswith(_ZIP_MAGIC) else "not numpy data")
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


#: Format -> reader. Formats without an entry are refused before the URI is opened.
READERS: dict[str, Reader] = {"npy": _read_npy, "npz": _read_npz}
