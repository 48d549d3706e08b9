"""What the registry (:data:`worker.data.formats.REGISTRY`) knows about one data format.

A :class:`DataFormat` names everything the rest of the package asks about a format: how a
reference implies it (extensions, ``data:`` media types), which options of a reference apply
to it, whether its files carry labels or read as a single column, its reader, and how the
distributed reader cuts a file into partitions (:class:`Partitioning`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from worker.data.formats.parsed import Parsed


class ReadOptions(Protocol):
    """The options of a reference that readers use (a :class:`~worker.data.refs.DataRef`
    is one; the formats never import the references, which import the formats)."""

    @property
    def key(self) -> str | None: ...
    @property
    def header(self) -> bool: ...
    @property
    def columns(self) -> list[str | int] | None: ...
    @property
    def label_column(self) -> str | int | None: ...
    @property
    def zero_based(self) -> bool | None: ...
    @property
    def n_features(self) -> int | None: ...


#: Reads a whole file: (seekable stream, reference, JSON path) -> values and labels.
Reader = Callable[[BinaryIO, ReadOptions, str], Parsed]

#: The rows of each row group (or record batch) of a columnar file, read from its footer.
GroupRows = Callable[[BinaryIO], list[int]]

#: The columns of a columnar file, read from its footer.
GroupColumns = Callable[[BinaryIO], int]

#: Reads some row groups of a columnar file: (stream, group indices, reference, JSON path).
GroupReader = Callable[[BinaryIO, Sequence[int], ReadOptions, str], Parsed]


#: Reads the whole lines of one line-cut partition: (bytes, the file's column names from
#: its header, reference, JSON path) -> values and labels.
LineReader = Callable[[bytes, Sequence[str], ReadOptions, str], Parsed]

#: A line-cut file's header, from its first line: (line, reference, JSON path) -> (bytes
#: the header takes, column names).
HeaderReader = Callable[[bytes, ReadOptions, str], tuple[int, tuple[str, ...]]]

#: The index base and width of a line-cut file, settled over every partition's census:
#: (reference, global row of the first index 0 or None, largest index + 1, global row of
#: the largest index, JSON path) -> (base, width).
ColumnSettler = Callable[[ReadOptions, int | None, int, int, str], tuple[int, int]]


def zero_based_columns(ref: ReadOptions, first_zero: int | None, width: int, widest: int,
                       path: str) -> tuple[int, int]:
    """The :data:`ColumnSettler` of files whose columns are 0-based positions."""
    return 0, width


@dataclass(frozen=True)
class Partitioning:
    """How :mod:`worker.distributed.partitions` cuts a file of the format.

    ``kind`` is one of ``"lines"`` (byte ranges cut at newlines, whose lines ``read_lines``
    reads after the ``header``, if the format has one, and whose census ``settle_columns``
    settles), ``"npy"`` (row ranges of a C-ordered array), ``"row_groups"`` (whole row
    groups or record batches, which ``group_rows`` counts, ``read_groups`` reads and whose
    columns ``columns`` counts) or
    ``"whole"`` (one partition).
    """

    kind: str
    group_rows: GroupRows | None = None
    read_groups: GroupReader | None = None
    columns: GroupColumns | None = None
    read_lines: LineReader | None = None
    header: HeaderReader | None = None
    settle_columns: ColumnSettler = zero_based_columns


NPY_ROWS = Partitioning("npy")
WHOLE = Partitioning("whole")


def lines(read_lines: LineReader, header: HeaderReader | None = None,
          settle_columns: ColumnSettler = zero_based_columns) -> Partitioning:
    """Partitions of whole lines, read (and their census settled) by the format."""
    return Partitioning("lines", read_lines=read_lines, header=header,
                        settle_columns=settle_columns)


def row_groups(group_rows: GroupRows, read_groups: GroupReader,
               columns: GroupColumns) -> Partitioning:
    """Partitions of whole row groups (record batches), counted and read by the format."""
    return Partitioning("row_groups", group_rows, read_groups, columns=columns)


@dataclass(frozen=True)
class DataFormat:
    """One format a data reference may name.

    Attributes
    ----------
    name : str
        The reference's ``format`` value.
    extensions : tuple of str
        Lower-case file-name extensions, with the dot, that imply the format.
    media_types : tuple of str
        ``data:`` URI media types that imply the format.
    reader : Reader
        Parses a whole file.
    options : tuple of str
        The format-specific reference options it accepts (``key``, ``header``, ``columns``,
        ``label_column``, ``zero_based``, ``n_features``).
    labelled : bool
        Every file carries labels next to its features (svmlight). A format accepting
        ``label_column`` carries them when a reference names that column.
    column_vector : bool
        A file holding a single column is read as a vector of shape (rows,).
    partitions : Partitioning
        How the distributed reader cuts a file.
    """

    name: str
    extensions: tuple[str, ...]
    media_types: tuple[str, ...]
    reader: Reader
    options: tuple[str, ...] = ()
    labelled: bool = False
    column_vector: bool = False
    partitions: Partitioning = WHOLE

    def carries_labels(self, ref: ReadOptions) -> bool:
        """True when the file ``ref`` names holds labels next to its features."""
        return self.labelled or ("label_column" in self.options
                                 and ref.label_column is not None)
