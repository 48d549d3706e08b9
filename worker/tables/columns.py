"""A table's columns by name, and their values as numbers, text or category codes.

Every refusal is a :class:`~worker.errors.DataError` naming the JSON path of the table, the
column and the first bad row (0-based, header excluded; a partition's rows are numbered from
its ``first_row``, so messages name the row of the whole table). Rules: names match with
surrounding whitespace ignored; text values are compared with surrounding whitespace
ignored; a numeric column may hold numbers or text that reads as a number (`` 39``); an
empty cell, NaN or an infinite value is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from worker.data.formats.tabular import is_number
from worker.errors import DataError


@dataclass(frozen=True)
class Table:
    """Columns of equal length by (whitespace-stripped) name; ``path`` names the table and
    ``first_row`` is the whole table's row of row 0 (a partition's start)."""

    columns: Mapping[str, pa.ChunkedArray]
    rows: int
    path: str
    first_row: int = 0

    @classmethod
    def of(cls, table: pa.Table, path: str, first_row: int = 0) -> Table:
        """A pyarrow table's columns, names stripped."""
        return cls({name.strip(): table.column(i) for i, name in enumerate(table.column_names)},
                   table.num_rows, path, first_row)

    def column(self, name: str) -> pa.Array:
        """One column as a single array; the error lists the table's columns."""
        if name not in self.columns:
            raise DataError(self.path, f"the table has no column {name!r}; its columns are "
                                       f"{listed(list(self.columns))}")
        return self.columns[name].combine_chunks()

    def numbers(self, name: str, hint: str = "") -> np.ndarray:
        """A column as finite float64 values, shape (rows,)."""
        column = self.column(name)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column = self._parsed(name, pc.utf8_trim_whitespace(column), hint)
        elif not _numeric(column.type):
            raise DataError(self.path, f"column {name!r} holds {column.type} values, not "
                                       f"numbers{hint}")
        self._no_missing(name, column)
        values = np.asarray(pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False),
                            dtype=np.float64)
        self._finite(name, values)
        return values

    def text(self, name: str) -> pa.Array:
        """A column as whitespace-stripped text (numbers as they print), shape (rows,)."""
        column = self.column(name)
        self._no_missing(name, column)
        if pa.types.is_floating(column.type):
            column = pc.cast(column, pa.float64())
            self._finite(name, column.to_numpy(zero_copy_only=False))
            integral = pc.all(pc.equal(pc.floor(column), column)).as_py()
            column = pc.cast(column, pa.int64()) if integral else column
        return pc.utf8_trim_whitespace(pc.cast(column, pa.string()))

    def codes(self, name: str, categories: Sequence[str]) -> np.ndarray:
        """The position of each row's value among ``categories``, int64 (rows,)."""
        codes = pc.index_in(self.text(name), value_set=pa.array(list(categories), pa.string()))
        if codes.null_count:
            row = int(np.flatnonzero(codes.is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(self.path, f"column {name!r} row {self.first_row + row} holds "
                                       f"{self.text(name)[row].as_py()!r}, not one of the "
                                       f"model's categories ({listed(list(categories))}); "
                                       "list it in categories (or drop the row)")
        return codes.to_numpy(zero_copy_only=False).astype(np.int64)

    def _parsed(self, name: str, column: pa.Array, hint: str) -> pa.Array:
        """Text that reads as numbers, as float64; the error names the first that does not."""
        empty = pc.equal(column, "")
        column = pc.if_else(empty, pa.scalar(None, pa.string()), column)
        try:
            return pc.cast(column, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for row, value in enumerate(column.to_pylist()):
                if value is not None and not is_number(value):
                    raise DataError(self.path, f"column {name!r} row {self.first_row + row} "
                                               f"holds {value!r}, not a number{hint}") from None
            raise

    def _no_missing(self, name: str, column: pa.Array) -> None:
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(self.path, f"column {name!r} row {self.first_row + row} is empty "
                                       "(a missing value); fill it or drop the row")

    def _finite(self, name: str, values: np.ndarray) -> None:
        """Refuse the first NaN or infinite value of a column's ``values`` (rows,)."""
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            row = int(bad[0])
            raise DataError(self.path, f"column {name!r} row {self.first_row + row} is "
                                       f"{values[row]}; every "
                                       "value must be finite: replace or drop that row")


def _numeric(kind: pa.DataType) -> bool:
    """Whether a column of this type is read as numbers as it is: integers, floats,
    booleans, decimals, and the null type of a column whose every cell is empty (its first
    row is then refused as a missing value)."""
    return (pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind) or pa.types.is_decimal(kind)
            or pa.types.is_null(kind))


def listed(names: list[str]) -> str:
    """Names for a message, at most 30."""
    return ", ".join(map(repr, names[:30])) + (", ..." if len(names) > 30 else "")
