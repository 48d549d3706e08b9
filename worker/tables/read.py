"""Reading a table's columns by name from a data reference (csv, parquet, feather) or from
memory (a pyarrow table, a pandas DataFrame, a mapping of columns).

References go through the data layer (:mod:`worker.data.sources`: schemes, data roots, size
caps, ``sha256``); only the columns a model uses are parsed (parquet and feather read
only their buffers). The table must fit the per-job memory budget once read.
"""

from __future__ import annotations

import io
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from worker.data.formats.arrow_ipc import expect_ipc_file
from worker.data.formats.expansion import check_expansion, expansion_budget
from worker.data.formats.tabular import csv_names
from worker.data.read import LoadStats, parse
from worker.data.refs import DataRef
from worker.data.sources import open_source
from worker.errors import DataError
from worker.settings import DataSettings
from worker.tables.columns import Table, listed

#: Bytes a read table may take per byte of csv text (Arrow strings, offsets, numbers).
CSV_EXPANSION = 3
#: Bytes per cell of a columnar file's selected columns (a number or a short text's offset).
CELL_BYTES = 16
#: The csv cells read as missing values: pyarrow's (empty, ``NA``, ``null``, ...) but the
#: spellings of NaN, which read as the number NaN, so that a refusal says the row is NaN.
CSV_NULLS = [cell for cell in pa_csv.ConvertOptions().null_values
             if cell.lstrip("-").lower() != "nan"]


def read_table(ref: DataRef, columns: Sequence[str], path: str, *, roots: Sequence[Path],
               settings: DataSettings, stats: LoadStats | None = None) -> Table:
    """The named ``columns`` of the table ``ref`` points to, read under ``roots`` and the
    job's data ``settings`` (resolved by the caller: the CLI, the API or the worker).

    Raises
    ------
    DataError
        The reference cannot be read, lacks a column (the message lists its columns), or
        would exceed the per-job memory budget.
    """
    started = time.perf_counter()
    source = open_source(ref.uri, path, roots, settings)
    with source.open() as stream:
        size = stream.seek(0, io.SEEK_END)
        stream.seek(0)
        reader = TABLE_READERS[ref.format]
        with expansion_budget(settings.max_job_bytes):
            table = parse(lambda data, ref, path: reader(data, ref, list(columns), size, path),
                          stream, ref, path)
    if stats is not None:
        stats.references += 1
        stats.bytes_read += size
        stats.seconds += time.perf_counter() - started
    if table.num_rows == 0:
        raise DataError(path, "the table has no rows; give at least one")
    return Table.of(table, path)


def as_table(data: Any, path: str = "table") -> Table:
    """An in-memory table: a :class:`Table`, pyarrow table, pandas DataFrame or a mapping
    of column name to values."""
    if isinstance(data, Table):
        return data
    if isinstance(data, pa.Table):
        return Table.of(data, path)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):     # a pandas DataFrame
        return Table.of(pa.Table.from_pandas(data, preserve_index=False), path)
    if isinstance(data, Mapping):
        return Table.of(pa.table({str(k): list(v) if not hasattr(v, "__array__") else v
                                  for k, v in data.items()}), path)
    raise TypeError(f"a table is a pyarrow Table, a pandas DataFrame or a mapping of columns, "
                    f"got {type(data).__name__}")


def read_parquet_rows(stream: BinaryIO, groups: Sequence[int], columns: Sequence[str],
                      path: str) -> pa.Table:
    """The named ``columns`` of some row groups of a parquet file (a partition of a table:
    :mod:`worker.distributed.pairs`); only the footer and those groups' column chunks are
    read, and they must fit the per-job memory budget (the caller's
    :func:`~worker.data.formats.expansion.expansion_budget`).

    Raises
    ------
    DataError
        A column the file lacks (the message lists its columns) or over the budget.
    """
    parquet = pq.ParquetFile(stream)
    selected = _selected(parquet.schema_arrow.names, columns, path)
    rows = sum(parquet.metadata.row_group(group).num_rows for group in groups)
    check_expansion(CELL_BYTES * rows * len(selected), "the columns read", path)
    return parquet.read_row_groups(list(groups), columns=selected)


def _selected(names: Sequence[str], wanted: Sequence[str], path: str) -> list[str]:
    """The file's own names of the wanted columns (matched with whitespace ignored)."""
    stripped = {name.strip(): name for name in names}
    missing = [name for name in wanted if name not in stripped]
    if missing:
        raise DataError(path, f"the table has no column {missing[0]!r}; its columns are "
                              f"{listed(list(stripped))}")
    return [stripped[name] for name in dict.fromkeys(wanted)]


def _csv(stream: BinaryIO, ref: DataRef, wanted: list[str], size: int, path: str) -> pa.Table:
    names = csv_names(stream, ref.header, path)
    check_expansion(CSV_EXPANSION * size, "the csv table", path)
    return pa_csv.read_csv(
        stream, read_options=pa_csv.ReadOptions(autogenerate_column_names=not ref.header,
                                                use_threads=False),   # as data/formats/tabular
        convert_options=pa_csv.ConvertOptions(include_columns=_selected(names, wanted, path),
                                              null_values=CSV_NULLS))


def _parquet(stream: BinaryIO, ref: DataRef, wanted: list[str], size: int,
             path: str) -> pa.Table:
    parquet = pq.ParquetFile(stream)
    selected = _selected(parquet.schema_arrow.names, wanted, path)
    check_expansion(CELL_BYTES * parquet.metadata.num_rows * len(selected),
                    "the columns read", path)
    return parquet.read(columns=selected)


def _feather(stream: BinaryIO, ref: DataRef, wanted: list[str], size: int,
             path: str) -> pa.Table:
    expect_ipc_file(stream, path)
    reader = ipc.open_file(stream)
    selected = _selected(reader.schema.names, wanted, path)
    check_expansion(CELL_BYTES * reader.count_rows() * len(selected), "the columns read", path)
    options = ipc.IpcReadOptions(included_fields=[reader.schema.get_field_index(name)
                                                  for name in selected])
    return ipc.open_file(stream, options=options).read_all()


#: The reader of each format a table may have: the spec's
#: :data:`~worker.spec.tables.TABLE_FORMATS`, which lists the names again because the spec
#: layer cannot import this one (``tests/tables/test_lowering.py`` keeps them equal).
TABLE_READERS = {"csv": _csv, "parquet": _parquet, "feather": _feather}
