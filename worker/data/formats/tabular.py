"""``csv`` and ``parquet`` readers: selected numeric columns as a dense matrix, plus labels.

Both formats become an Arrow table, then the same code picks the columns (parquet's
:func:`read_columns` also serves Arrow IPC, :mod:`.arrow_ipc`): ``columns``
(names or 0-based indices; default every column but the label column) are the features,
``label_column`` (name or index) the labels. Column names are matched with surrounding
whitespace ignored, so ``age, workclass`` headers work. Every selected column must hold
numbers (or booleans); a text column is refused with its first non-numeric value. Labels
must be numbers too: class names such as ``>50K`` have to be mapped to +1/-1 (or 1/0) in the
file first, since the loss decides what a label means. An empty cell is reported as a
missing value at its row.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from worker.data.formats.expansion import FLOAT64_BYTES, check_expansion
from worker.data.formats.parsed import Parsed
from worker.data.formats.record import ReadOptions
from worker.errors import DataError
from worker.losses import LOSSES

_FAILED_COLUMN = re.compile(r"In CSV column #(\d+)")

#: Bytes read at a time when counting lines.
_COUNT_BLOCK = 2**24

#: Labels as the error message words them: each label rule of :mod:`worker.losses` and the
#: losses that follow it.
LABEL_RULE = "labels must be numbers: " + "; ".join(
    f"{rule.sentence} for " + ", ".join(name for name, loss in LOSSES.items()
                                        if loss.labels is rule)
    for rule in dict.fromkeys(loss.labels for loss in LOSSES.values()))


def read_csv(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """Selected columns of a comma-separated file (``header``: first line names columns)."""
    names = csv_names(stream, ref.header, path)
    features, label = select_columns(names, ref.columns, ref.label_column, ref.header, path)
    check_expansion(_table_bytes(_count_lines(stream), len(_selected(features, label))),
                    "the csv file", path)
    return _read_csv(stream, names, ref, path,
                     pa_csv.ReadOptions(autogenerate_column_names=not ref.header,
                                        use_threads=False))


def csv_header(line: bytes, ref: ReadOptions, path: str) -> tuple[int, tuple[str, ...]]:
    """The bytes a csv file's header takes (none without ``header``) and its column names,
    from its first ``line``."""
    names = tuple(csv_names(io.BytesIO(line), ref.header, path))
    return (len(line) if ref.header else 0), names


def read_csv_lines(block: bytes, names: Sequence[str], ref: ReadOptions, path: str) -> Parsed:
    """Whole lines of a csv file, without its header (one partition,
    :mod:`worker.distributed.partitions`); ``names`` are the file's columns (:func:`csv_names`)."""
    if not block.strip():
        features, label = select_columns(names, ref.columns, ref.label_column, ref.header, path)
        return Parsed(np.zeros((0, len(features))), None if label is None else np.zeros(0))
    return _read_csv(io.BytesIO(block), names, ref, path,
                     pa_csv.ReadOptions(column_names=list(names), use_threads=False))


def _read_csv(stream: BinaryIO, names: Sequence[str], ref: ReadOptions, path: str,
              read: pa_csv.ReadOptions) -> Parsed:
    """The selected columns of csv text whose columns are ``names``.

    Read on the calling thread (``use_threads=False`` in ``read``): when Arrow's threaded
    reader refuses a cell, its pool threads can still be running as the process exits, which
    aborts it (``terminate called without an active exception``, seen as exit -6 of the CLI
    after its message)."""
    features, label = select_columns(names, ref.columns, ref.label_column, ref.header, path)
    wanted = [names[i] for i in _selected(features, label)]
    convert = pa_csv.ConvertOptions(include_columns=wanted, null_values=[""],
                                    column_types=dict.fromkeys(wanted, pa.float64()))
    try:
        table = pa_csv.read_csv(stream, read_options=read, convert_options=convert)
    except pa.ArrowInvalid as exc:
        failed = _FAILED_COLUMN.search(str(exc))
        if failed is None:
            raise
        column = int(failed.group(1))
        stream.seek(0)
        raise _not_numeric(stream, read, names, column, column == label, path) from None
    return _arrays(table, [names[i] for i in features],
                   None if label is None else names[label], path)


def read_parquet(stream: BinaryIO, ref: ReadOptions, path: str) -> Parsed:
    """Selected numeric columns of a parquet file."""
    parquet = pq.ParquetFile(stream)
    return read_columns(parquet.schema_arrow, parquet.metadata.num_rows,
                        lambda names: parquet.read(columns=names), ref, path)


def read_parquet_groups(stream: BinaryIO, groups: Sequence[int], ref: ReadOptions,
                        path: str) -> Parsed:
    """Selected numeric columns of some row groups of a parquet file (one partition,
    :mod:`worker.distributed.partitions`); only the footer and those groups' columns are read."""
    parquet = pq.ParquetFile(stream)
    rows = sum(parquet.metadata.row_group(group).num_rows for group in groups)
    return read_columns(parquet.schema_arrow, rows,
                        lambda names: parquet.read_row_groups(list(groups), columns=names),
                        ref, path)


def parquet_group_rows(stream: BinaryIO) -> list[int]:
    """The rows of each row group of a parquet file, from its footer."""
    metadata = pq.ParquetFile(stream).metadata
    return [metadata.row_group(group).num_rows for group in range(metadata.num_row_groups)]


def parquet_columns(stream: BinaryIO) -> int:
    """The columns of a parquet file, from its footer."""
    return pq.ParquetFile(stream).metadata.num_columns


def read_columns(schema: pa.Schema, rows: int, read: Callable[[list[str]], pa.Table],
                 ref: ReadOptions, path: str) -> Parsed:
    """The selected numeric columns of a columnar file whose columns ``schema`` lists.

    Parameters
    ----------
    schema : pyarrow.Schema
        The file's columns, checked to hold numbers before anything else is read.
    rows : int
        The rows ``read`` returns, from the file's footer: the table they make must fit the
        per-job memory budget before any column is decompressed.
    read : callable
        ``read(names)`` returns the table of those columns (the rows wanted).
    ref : ReadOptions
        ``columns`` and ``label_column`` select the features and the labels.
    path : str
        JSON path of the reference, for messages.
    """
    names = schema.names
    features, label = select_columns(names, ref.columns, ref.label_column, True, path)
    selected = _selected(features, label)
    for index in selected:
        kind = schema.field(index).type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                or pa.types.is_boolean(kind) or pa.types.is_decimal(kind)):
            raise DataError(path, _type_message(_describe(names[index], index),
                                                f"{kind} values", index == label))
    check_expansion(_table_bytes(rows, len(selected)), "the columns read", path)
    table = read([names[i] for i in selected])
    return _arrays(table, [names[i] for i in features],
                   None if label is None else names[label], path)


def select_columns(names: Sequence[str], columns: Sequence[str | int] | None,
                   label_column: str | int | None, named: bool,
                   path: str) -> tuple[list[int], int | None]:
    """Indices of the feature columns and of the label column (None when there is none)."""
    label = None if label_column is None else _column_index(names, label_column, named,
                                                            "label_column", path)
    if columns is None:
        return [i for i in range(len(names)) if i != label], label
    features = [_column_index(names, column, named, "columns", path) for column in columns]
    if label is not None and label in features:
        raise DataError(path, f"column {_describe(names[label], label)} is both a feature "
                              f"and the label column; drop it from \"columns\"")
    if len(set(features)) != len(features):
        raise DataError(path, "\"columns\" names a column twice; list each column once")
    return features, label


def _table_bytes(rows: int, columns: int) -> int:
    """Bytes reading ``columns`` of ``rows`` holds: the Arrow table (at most 8 bytes a
    numeric value) and the float64 result."""
    return 2 * FLOAT64_BYTES * rows * columns


def _count_lines(stream: BinaryIO) -> int:
    """Lines of the stream (an upper bound on its rows), counted in blocks; rewound after."""
    lines = 1
    while block := stream.read(_COUNT_BLOCK):
        lines += block.count(b"\n")
    stream.seek(0)
    return lines


def _selected(features: list[int], label: int | None) -> list[int]:
    """The columns to read: features, then the label column."""
    return features if label is None else [*features, label]


def _column_index(names: Sequence[str], column: str | int, named: bool, option: str,
                  path: str) -> int:
    """The 0-based position of a column given by name or index."""
    if isinstance(column, int):
        if column >= len(names):
            raise DataError(path, f"{option} index {column} is out of range: the file has "
                                  f"{len(names)} columns (0..{len(names) - 1})")
        return column
    if not named:
        raise DataError(path, f"{option} names column {column!r} but the file has no header "
                              f"row (\"header\": false); select columns by 0-based index")
    stripped = [name.strip() for name in names]
    if column.strip() not in stripped:
        listed = ", ".join(map(repr, stripped[:30])) + (", ..." if len(names) > 30 else "")
        raise DataError(path, f"{option} names column {column!r}, which the file does not "
                              f"have; its columns are {listed}")
    return stripped.index(column.strip())


def csv_names(stream: BinaryIO, header: bool, path: str) -> list[str]:
    """Column names as Arrow will use them: the header cells, or ``f0, f1, ...``."""
    first = stream.readline()
    stream.seek(0)
    try:
        cells = next(csv.reader([first.decode("utf-8-sig")]), [])
    except UnicodeDecodeError:
        raise DataError(path, "the csv file is not UTF-8 text; check the format") from None
    if not cells:
        raise DataError(path, "the csv file is empty; give at least one row")
    return cells if header else [f"f{i}" for i in range(len(cells))]


def _not_numeric(stream: BinaryIO, read: pa_csv.ReadOptions, names: Sequence[str],
                 column: int, is_label: bool, path: str) -> DataError:
    """The error for a csv column holding a value that is not a number, with its row."""
    name = names[column]
    text = pa_csv.read_csv(stream, read_options=read, convert_options=pa_csv.ConvertOptions(
        include_columns=[name], column_types={name: pa.string()})).column(0).to_pylist()
    row, value = next(((r, v) for r, v in enumerate(text) if v and not is_number(v)),
                      (0, text[0] if text else ""))
    return DataError(path, _type_message(_describe(name, column), f"text such as {value!r} "
                                         f"at row {row}", is_label))


def _type_message(column: str, found: str, is_label: bool) -> str:
    """What to do about a column that does not hold numbers."""
    if is_label:
        return (f"label column {column} holds {found}; {LABEL_RULE}: map the classes to "
                f"numbers in the file")
    return (f"column {column} holds {found}, not numbers; select numeric columns with "
            f"\"columns\" (or encode the categories as numbers first)")


def is_number(value: str) -> bool:
    """True when ``float`` accepts the text."""
    try:
        float(value)
    except ValueError:
        return False
    return True


def _describe(name: str, index: int) -> str:
    """A column for a message: its name and position."""
    return f"{name.strip()!r} (index {index})"


def _arrays(table: pa.Table, features: Sequence[str], label: str | None,
            path: str) -> Parsed:
    """The feature columns as a dense (rows, columns) float64 matrix, and the label column."""
    matrix = np.empty((table.num_rows, len(features)), dtype=np.float64)
    for j, name in enumerate(features):
        matrix[:, j] = _column(table, name, f"row {{row}} column {name.strip()!r}", path)
    labels = None if label is None else _column(table, label, "label at row {row}", path)
    return Parsed(matrix, labels)


def _column(table: pa.Table, name: str, where: str, path: str) -> np.ndarray:
    """One column as float64; an empty cell is reported as a missing value at its row."""
    column = table.column(name)
    if column.null_count:
        row = pc.index(pc.is_null(column), True).as_py()
        raise DataError(path, f"{where.format(row=row)} is empty (a missing value); fill or "
                              f"drop rows with missing values")
    return np.asarray(pc.cast(column, pa.float64()).to_numpy(), dtype=np.float64)

