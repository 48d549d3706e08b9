"""The registry of data formats a reference may name: one :class:`DataFormat` per format.

Everything else derives from :data:`REGISTRY`: the ``format`` values a reference accepts and
how it is inferred (:mod:`worker.data.refs`), which files carry labels or read as a vector
(:mod:`worker.data.read`), and how files are cut into partitions
(:mod:`worker.distributed.partitions`). Adding a format is one reader module here and one
record below.

Each reader takes a seekable binary stream, the :class:`~worker.data.refs.DataRef` (for its
format options) and the JSON path (for messages), and returns :class:`Parsed`: the values
as an ndarray or scipy sparse matrix, plus the labels when the file carries them. Readers
raise :class:`~worker.errors.DataError` for problems they can name; anything else a parser
of untrusted bytes throws is wrapped by the caller.

=============  ================================  =========================================
format         module                            values
=============  ================================  =========================================
``npy``        :mod:`.numpy_files`               any array ``numpy.save`` wrote
``npz``        :mod:`.numpy_files`               ``numpy.savez`` member or scipy sparse
``csv``        :mod:`.tabular`                   dense (rows, selected columns)
``parquet``    :mod:`.tabular`                   dense (rows, selected columns)
``svmlight``   :mod:`.svmlight`                  CSR (rows, n_features), with labels
``mtx``        :mod:`.matrix_market`             COO (coordinate) or dense (array)
``feather``    :mod:`.arrow_ipc`                 dense (rows, selected columns)
=============  ================================  =========================================
"""

from __future__ import annotations

from worker.data.formats.arrow_ipc import read_feather
from worker.data.formats.matrix_market import read_mtx
from worker.data.formats.numpy_files import read_npy, read_npz
from worker.data.formats.parsed import Parsed, Values
from worker.data.formats.record import (
    NPY_ROWS,
    DataFormat,
    Partitioning,
    Reader,
    lines,
    row_groups,
)
from worker.data.formats.svmlight import read_svmlight, read_svmlight_block, svmlight_columns
from worker.data.formats.tabular import (
    csv_header,
    parquet_columns,
    parquet_group_rows,
    read_csv,
    read_csv_lines,
    read_parquet,
    read_parquet_groups,
)

__all__ = ["REGISTRY", "DataFormat", "Parsed", "Partitioning", "Reader", "Values"]

#: Options of the formats whose columns are selected by name or index.
COLUMN_OPTIONS = ("columns", "label_column")

#: Format name -> its record.
REGISTRY: dict[str, DataFormat] = {record.name: record for record in (
    DataFormat("npy", (".npy",), ("application/x-npy",), read_npy, partitions=NPY_ROWS),
    DataFormat("npz", (".npz",), ("application/x-npz",), read_npz, options=("key",)),
    DataFormat("csv", (".csv",), ("text/csv",), read_csv, options=("header", *COLUMN_OPTIONS),
               column_vector=True, partitions=lines(read_csv_lines, csv_header)),
    DataFormat("parquet", (".parquet", ".pq"), ("application/vnd.apache.parquet",),
               read_parquet, options=COLUMN_OPTIONS, column_vector=True,
               partitions=row_groups(parquet_group_rows, read_parquet_groups,
                                         parquet_columns)),
    DataFormat("svmlight", (".svm", ".svmlight", ".libsvm"), ("application/x-svmlight",),
               read_svmlight, options=("zero_based", "n_features"), labelled=True,
               partitions=lines(read_svmlight_block, settle_columns=svmlight_columns)),
    DataFormat("mtx", (".mtx",), ("text/x-matrix-market",), read_mtx, column_vector=True),
    DataFormat("feather", (".feather", ".arrow", ".ipc"), ("application/vnd.apache.arrow.file",),
               read_feather, options=COLUMN_OPTIONS, column_vector=True),
)}
