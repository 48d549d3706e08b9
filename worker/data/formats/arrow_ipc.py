"""``feather`` reader: Arrow IPC files (Feather V2), selected numeric columns as a dense
matrix, plus labels.

Columns are chosen as in parquet (:func:`worker.data.formats.tabular.read_columns`):
``columns`` by name or 0-based index, default every column but ``label_column``, which holds
the labels. The footer gives the schema, so the types are checked first and only the
selected columns' buffers are read, once the rows (counted from the batches' headers,
without decompressing) show that they fit the per-job memory budget. The Arrow IPC *stream*
format and Feather V1 files are refused with a message saying how to write an IPC file
instead.
"""

from __future__ import annotations

from typing import BinaryIO

import pyarrow as pa
import pyarrow.ipc as ipc

from worker.data.formats.parsed import Parsed
from worker.data.formats.record import ReadOptions
from worker.data.formats.tabular import read_columns
from worker.errors import DataError

#: First bytes of an Arrow IPC file.
IPC_FILE_MAGIC = b"ARROW1"

#: First bytes of a Feather V1 file.
FEATHER_V1_MAGIC = b"FEA1"

#: First bytes of an Arrow IPC stream (the continuation marker of its first message).
IPC_STREAM_MAGIC = b"\xff\xff\xff\xff"

def read_feather(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """The selected numeric columns of an Arrow IPC file (Feather V2)."""
    _expect_ipc_file(stream, path)
    reader = ipc.open_file(stream)
    return read_columns(reader.schema, reader.count_rows(),
                        lambda names: _columns(stream, reader.schema, names), ref, path)


def _columns(stream: BinaryIO, schema: pa.Schema, names: list[str]) -> pa.Table:
    """Every record batch of the file, with only the columns ``names`` read."""
    options = ipc.IpcReadOptions(included_fields=[schema.get_field_index(n) for n in names])
    return ipc.open_file(stream, options=options).read_all()


def _expect_ipc_file(stream: BinaryIO, path: str) -> None:
    """Refuse data that is not an Arrow IPC file, naming what it looks like."""
    head = stream.read(len(IPC_FILE_MAGIC))
    stream.seek(0)
    if head.startswith(IPC_FILE_MAGIC):
        return
    if head.startswith(FEATHER_V1_MAGIC):
        found = ("a Feather V1 file, which is not read; rewrite it as Feather V2 with "
                 "pyarrow.feather.write_feather")
    elif head.startswith(IPC_STREAM_MAGIC):
        found = ("an Arrow IPC stream; write an IPC file instead, with "
                 "pyarrow.feather.write_feather or pyarrow.ipc.new_file")
    else:
        found = ("not an Arrow IPC file; set \"format\" to match the data, or write it with "
                 "pyarrow.feather.write_feather")
    raise DataError(path, f"format is feather but the data is {found}")
