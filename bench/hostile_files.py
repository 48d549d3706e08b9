"""Small data files that stand for far more memory than they occupy, or that lie about
themselves: the data half of the fuzz corpus (:mod:`bench.fuzz`) and of the expansion tests.

Each builder returns the file's bytes; ``values`` is the count of float64 values the file
expands to (so ``8 * values`` bytes once read).
"""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

#: Zeros written at a time into a compressed stream.
_BLOCK = bytes(2**20)


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def npz_bomb(values: int, method: int = zipfile.ZIP_DEFLATED, name: str = "x.npy") -> bytes:
    """An npz archive of one member holding ``values`` zeros, compressed with ``method``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive, \
            archive.open(name, "w", force_zip64=True) as member:
        member.write(_npy_header((values,)))
        remaining = 8 * values
        while remaining:
            chunk = _BLOCK[:min(remaining, len(_BLOCK))]
            member.write(chunk)
            remaining -= len(chunk)
    return buffer.getvalue()


def npz_lying_directory(values: int) -> bytes:
    """An npz bomb whose zip directory and local header claim the member is 1 KiB."""
    archive = npz_bomb(values)
    real = 8 * values + len(_npy_header((values,)))
    for width in (8, 4):  # the zip64 extra field, and the plain header fields
        archive = archive.replace(real.to_bytes(width, "little"), (1024).to_bytes(width, "little"))
    return archive


def npy_claiming(shape: tuple[int, ...], descr: str = "<f8", held: int = 64) -> bytes:
    """An .npy header claiming ``shape`` followed by only ``held`` bytes."""
    return _npy_header(shape, descr) + bytes(held)


def npy_pickled() -> bytes:
    """An .npy object array: loading it needs pickle, which must stay off."""
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    return buffer.getvalue()


def pickle_bytes() -> bytes:
    """A plain pickle (not numpy data at all)."""
    return pickle.dumps({"rows": [[1.0, 2.0]]})


def sparse_npz_shape(shape: tuple[int, int]) -> bytes:
    """A scipy COO npz with one entry and a declared ``shape``."""
    buffer = io.BytesIO()
    np.savez(buffer, format=np.array("coo"), shape=np.array(shape, dtype=np.int64),
             row=np.array([0], dtype=np.int32), col=np.array([0], dtype=np.int32),
             data=np.array([1.0]))
    return buffer.getvalue()


def mtx_claiming(rows: int, columns: int, entries: int | None) -> bytes:
    """A Matrix Market header claiming a shape (and ``entries``; None: an array file) with
    one entry line."""
    if entries is None:
        return f"%%MatrixMarket matrix array real general\n{rows} {columns}\n1\n".encode()
    return (f"%%MatrixMarket matrix coordinate real general\n{rows} {columns} {entries}\n"
            f"1 1 1\n").encode()


def svmlight_lines(lines: int, index: int = 1) -> bytes:
    """``lines`` rows ``1 <index>:1``."""
    return f"1 {index}:1\n".encode() * lines


def parquet_bomb(values: int) -> bytes:
    """A parquet file of one float64 column of ``values`` zeros (dictionary, zstd)."""
    buffer = io.BytesIO()
    pq.write_table(pa.table({"x": pa.array(np.zeros(values))}), buffer, compression="zstd")
    return buffer.getvalue()


def feather_bomb(values: int) -> bytes:
    """An Arrow IPC file of one float64 column of ``values`` zeros, zstd-compressed."""
    table = pa.table({"x": pa.array(np.zeros(values))})
    buffer = io.BytesIO()
    with ipc.new_file(buffer, table.schema,
                      options=ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_table(table)
    return buffer.getvalue()
