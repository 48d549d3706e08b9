"""Read the ``<matrix>`` and ``<vector>`` values of a spec into float64 arrays.

Inline values are converted directly. A :class:`~worker.data.refs.DataRef` is loaded in four
steps, each checked before the next: its URI becomes a policy-checked
:class:`~worker.data.sources.Source` (nothing is read yet), the source's validator is looked up
in the :class:`~worker.data.cache.ParsedCache`, and on a miss the bytes are opened (at most
``LIGHTTOUCH_MAX_DATA_BYTES``), their ``sha256`` verified, and parsed by the format's reader
(:data:`worker.data.formats.REGISTRY`). A matrix from a reference is returned dense when at least
:data:`~worker.data.csr.DENSE_MIN_DENSITY` of its entries are non-zero, CSR otherwise; examples
(:func:`read_examples`) keep the form their file stores, since the engine holds them as CSR.

Callers that want to report what loading cost pass a :class:`LoadStats`. Every failure is a
:class:`~worker.errors.DataError` whose message starts with the JSON path of the value, then
says what is wrong and what to fix.
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from worker.data.cache import ParsedCache
from worker.data.csr import DENSE_MIN_DENSITY, as_csr
from worker.data.formats import REGISTRY, Parsed, Reader, Values
from worker.data.formats.expansion import expansion_budget
from worker.data.refs import CooMatrix, DataRef, MatrixValue, VectorValue
from worker.data.sources import open_source
from worker.data.sources.wording import brief
from worker.errors import DataError
from worker.settings import DataSettings
from worker.stats import Stats, stat

#: Values per block when looking for NaN and infinities.
_CHECK_BLOCK = 2**20

#: Element kinds accepted as numbers: bool, signed and unsigned integer, floating point.
_REAL_KINDS = "biuf"

Matrix = np.ndarray | sp.csr_matrix


@dataclass
class LoadStats(Stats):
    """The loading stage's record (:mod:`worker.stats`): what reading data references cost,
    summed over the references read as they are read."""

    references: int = stat("data_references", default=0)
    bytes_read: int = stat("data_bytes", default=0)
    seconds: float = stat("data_load_s", default=0.0)
    cache_hits: int = stat("data_cache_hits", default=0)


def read_matrix(value: MatrixValue, path: str, *, roots: Sequence[Path],
                settings: DataSettings,
                stats: LoadStats | None = None) -> Matrix:
    """A 2-D float64 matrix: dense ndarray, or CSR (canonical, duplicates summed) when sparse.

    Parameters
    ----------
    value : MatrixValue
        Inline rows, a :class:`CooMatrix` or a :class:`DataRef` (validated models).
    path : str
        JSON path of the value in the spec, e.g. ``objective.data.features``.
    roots : sequence of Path
        Directories ``file://`` URIs may read (see :func:`worker.settings.data_roots`).
    settings : DataSettings
        Limits, allow list, cache and S3 settings, resolved by the caller (the job's, with
        its budget: :func:`worker.settings.data_settings`).
    stats : LoadStats, optional
        Incremented with the references read, bytes, seconds and cache hits.

    Raises
    ------
    DataError
        The value cannot be read, is not 2-D, or holds a non-finite number.
    """
    if isinstance(value, CooMatrix):
        return _checked_matrix(_csr(sp.coo_matrix(
            (np.asarray(value.data, dtype=np.float64),
             (np.asarray(value.row, dtype=np.int64), np.asarray(value.col, dtype=np.int64))),
            shape=value.shape), path), path)
    if isinstance(value, DataRef):
        values = _load(value, path, roots, settings, stats).values
        return _checked_matrix(_by_density(values, path), path)
    return _checked_matrix(_inline_rows(value, path), path)


def read_vector(value: VectorValue, path: str, *, roots: Sequence[Path],
                settings: DataSettings, allow_infinite: bool = False,
                stats: LoadStats | None = None) -> np.ndarray:
    """A 1-D float64 array from an inline list or a :class:`DataRef` (see :func:`read_matrix`).

    A reference to a file that carries labels (svmlight; a column format such as csv with
    ``label_column``) reads those labels; a file of a format with ``column_vector`` in
    :data:`~worker.data.formats.REGISTRY` (csv, parquet, mtx, ...) holding a single column
    reads that column. ``allow_infinite`` accepts ±inf (bounds) but still refuses NaN.
    """
    if isinstance(value, DataRef):
        vector = _vector_of(_load(value, path, roots, settings, stats), value, path)
    else:
        vector = np.asarray(value)
    return _checked_vector(vector, path, allow_infinite, "index")


def read_examples(features: MatrixValue, labels: VectorValue | None, path: str, *,
                  roots: Sequence[Path], settings: DataSettings,
                  stats: LoadStats | None = None) -> tuple[Matrix, np.ndarray]:
    """Features ``(n, d)`` and labels ``(n,)`` of ``{path}.features`` and ``{path}.labels``.

    When ``labels`` is None they come from the features file, which must carry them
    (svmlight, or a column format such as csv with ``label_column``); the file is read
    once. Label values are not judged here: which values a loss accepts is the compiler's
    call. Features from a reference keep their file's form (CSR from a sparse file, dense
    from a dense one): the engine compiles examples to CSR, so turning a sparse file's
    dense-enough rows into an array would only be undone, at a cost a small solve notices
    (measured: docs/benchmarks.md#fixed-costs-measured).
    """
    features_path, labels_path = f"{path}.features", f"{path}.labels"
    if labels is not None:
        if not isinstance(features, DataRef):
            return (read_matrix(features, features_path, roots=roots, settings=settings,
                                stats=stats),
                    read_vector(labels, labels_path, roots=roots, settings=settings,
                                stats=stats))
        parsed = _load(features, features_path, roots, settings, stats)
        return (_checked_matrix(parsed.values, features_path),
                read_vector(labels, labels_path, roots=roots, settings=settings, stats=stats))
    if not (isinstance(features, DataRef) and _carries_labels(features)):
        raise DataError(labels_path, "labels are missing: give \"labels\", or reference a "
                                     f"features file that carries them ({_labelled_files()})")
    parsed = _load(features, features_path, roots, settings, stats)
    assert parsed.labels is not None
    return (_checked_matrix(parsed.values, features_path),
            _checked_vector(parsed.labels, features_path, False, "the label of row"))


def _carries_labels(ref: DataRef) -> bool:
    """True when the referenced file holds labels next to its features."""
    return REGISTRY[ref.format].carries_labels(ref)


def _labelled_files() -> str:
    """The files that carry labels, for a message: ``svmlight, or csv/parquet with ...``."""
    always = [record.name for record in REGISTRY.values() if record.labelled]
    by_column = [name for name, record in REGISTRY.items() if "label_column" in record.options]
    return ", or ".join([*always, f"{'/'.join(by_column)} with \"label_column\""])


# -- turning values into checked arrays ---------------------------------------------------------

def _inline_rows(rows: list[list[float]], path: str) -> np.ndarray:
    """Inline nested lists as a dense array; every row needs the same length."""
    width = len(rows[0]) if rows else 0
    for r, row in enumerate(rows):
        if len(row) != width:
            raise DataError(path, f"row {r} has length {len(row)} but row 0 has length "
                                  f"{width}; a dense matrix must be rectangular")
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def _checked_matrix(matrix: Values, path: str) -> Matrix:
    """The matrix, if 2-D with finite entries."""
    if matrix.ndim != 2:
        raise DataError(path, f"found an array of shape {matrix.shape}; need a 2-D array of "
                              f"shape (rows, columns)")
    entries = matrix.data if sp.issparse(matrix) else matrix
    bad = _first_nonfinite(entries)
    if bad is None:
        return matrix
    if sp.issparse(matrix):
        row = int(np.searchsorted(matrix.indptr, bad, side="right")) - 1
        where, value = f"row {row} column {matrix.indices[bad]}", matrix.data[bad]
    else:
        row, col = np.unravel_index(bad, matrix.shape)
        where, value = f"row {row} column {col}", matrix[row, col]
    raise DataError(path, _nonfinite(where, value))


def _checked_vector(vector: np.ndarray | sp.spmatrix, path: str, allow_infinite: bool,
                    position: str) -> np.ndarray:
    """The vector as float64, if dense, 1-D and finite (or ±inf, when allowed)."""
    if sp.issparse(vector):
        raise DataError(path, f"found a sparse matrix of shape {vector.shape}; need a dense "
                              f"1-D array of shape (n,), e.g. written by numpy.save")
    array = _as_float(vector, path)
    if array.ndim != 1:
        raise DataError(path, f"found an array of shape {array.shape}; need a 1-D array of "
                              f"shape (n,)")
    bad = _first_nonfinite(array, allow_infinite)
    if bad is not None:
        raise DataError(path, _nonfinite(f"{position} {bad}", array[bad], allow_infinite))
    return array


def _vector_of(parsed: Parsed, ref: DataRef, path: str) -> Values:
    """The vector a reference means: the file's labels, its only column, or its 1-D array."""
    if parsed.labels is not None:
        return parsed.labels
    values = parsed.values
    if REGISTRY[ref.format].column_vector and values.ndim == 2 and values.shape[1] == 1:
        return values.toarray().ravel() if sp.issparse(values) else values.ravel()
    return values


def _as_float(array: np.ndarray, path: str) -> np.ndarray:
    """The array as float64; refuses element types that are not real numbers."""
    if array.dtype.kind not in _REAL_KINDS:
        raise DataError(path, f"holds {array.dtype} values; need real numbers (float, integer "
                              f"or bool), e.g. an array saved with dtype float64")
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-range values become inf
        return array.astype(np.float64, copy=False)


def _csr(matrix: sp.spmatrix | sp.sparray, path: str) -> sp.csr_matrix:
    """Any 2-D scipy sparse matrix as canonical float64 CSR."""
    if matrix.ndim != 2:
        raise DataError(path, f"found a sparse array of shape {matrix.shape}; need a 2-D "
                              f"matrix of shape (rows, columns)")
    if matrix.dtype.kind not in _REAL_KINDS:
        raise DataError(path, f"holds {matrix.dtype} values; need real numbers (float, integer "
                              f"or bool)")
    return as_csr(matrix)


def _normalized(parsed: Parsed, path: str) -> Parsed:
    """Values as float64 (sparse as canonical CSR) and labels as float64."""
    values = (_csr(parsed.values, path) if sp.issparse(parsed.values)
              else _as_float(parsed.values, path))
    labels = None if parsed.labels is None else _as_float(parsed.labels, path)
    return Parsed(values, labels)


def _by_density(values: Values, path: str) -> Values:
    """A 2-D matrix as dense when at least :data:`DENSE_MIN_DENSITY` is non-zero, else CSR."""
    cells = values.shape[0] * values.shape[1] if values.ndim == 2 else 0
    if cells == 0:
        return values
    nonzero = values.nnz if sp.issparse(values) else np.count_nonzero(values)
    dense = nonzero >= DENSE_MIN_DENSITY * cells
    if sp.issparse(values):
        return values.toarray() if dense else values
    return values if dense else _csr(sp.csr_matrix(values), path)


def _first_nonfinite(values: np.ndarray, allow_infinite: bool = False) -> int | None:
    """Flat (C-order) index of the first NaN (or infinity, unless allowed), or None.

    Checked in blocks of :data:`_CHECK_BLOCK` values, so the test needs little memory.
    """
    flat = values.reshape(-1)
    for start in range(0, flat.size, _CHECK_BLOCK):
        block = flat[start:start + _CHECK_BLOCK]
        good = ~np.isnan(block) if allow_infinite else np.isfinite(block)
        if not good.all():
            return start + int(np.argmin(good))
    return None


def _nonfinite(where: str, value: float, allow_infinite: bool = False) -> str:
    """The message for a non-finite number at ``where``."""
    allowed = "every value must be a number (±inf is allowed here)" if allow_infinite \
        else "every value must be finite"
    return f"{where} is {float(value)}; {allowed}: replace or drop NaN and infinite entries"


# -- loading a reference -----------------------------------------------------------------------

def _load(ref: DataRef, path: str, roots: Sequence[Path], settings: DataSettings,
          stats: LoadStats | None) -> Parsed:
    """A reference's parsed, normalized data: from the cache, or read from its source."""
    started = time.perf_counter()
    reader = REGISTRY[ref.format].reader
    source = open_source(ref.uri, path, roots, settings)
    cache = ParsedCache.from_settings(settings)
    validator = None if cache is None else source.validator() or (
        f"sha256:{ref.sha256}" if ref.sha256 else None)
    key = None if cache is None or validator is None else cache.key(ref.uri, validator, ref)
    parsed = None if key is None else cache.get(key)
    hit, size = parsed is not None, 0
    if not hit:
        with source.open() as stream:
            size = stream.seek(0, io.SEEK_END)
            stream.seek(0)
            try:
                with expansion_budget(settings.max_job_bytes):
                    parsed = _normalized(parse(reader, stream, ref, path), path)
            except MemoryError:
                raise DataError(path, f"reading {brief(ref.uri)} needs more memory than this "
                                      f"process may use; use smaller data, or ask the "
                                      f"operator to raise LIGHTTOUCH_MAX_JOB_BYTES") from None
        if key is not None:
            cache.put(key, parsed)
    if stats is not None:
        stats.references += 1
        stats.bytes_read += size
        stats.cache_hits += hit
        stats.seconds += time.perf_counter() - started
    return parsed


def parse(reader: Reader, stream: BinaryIO, ref: DataRef, path: str) -> Parsed:
    """Verify the sha256 (when given) and run the reader; its failures become DataErrors."""
    try:
        if ref.sha256 is not None:
            _verify_sha256(stream, ref.sha256, path)
        return reader(stream, ref, path)
    except (DataError, MemoryError):
        raise
    except Exception as exc:  # parsers of untrusted bytes fail in open-ended ways
        raise DataError(path, f"cannot read {brief(ref.uri)} as {ref.format}: "
                              f"{str(exc).rstrip('.')}; check that the data is a valid "
                              f".{ref.format} file") from exc


def _verify_sha256(stream: BinaryIO, expected: str, path: str) -> None:
    """Compare the stream's SHA-256 with ``expected``, then rewind the stream."""
    actual = hashlib.file_digest(stream, "sha256").hexdigest()
    stream.seek(0)
    if actual != expected:
        raise DataError(path, f"sha256 mismatch: the data hashes to {actual} but the "
                              f"reference says {expected}; fix \"sha256\" or the data")
