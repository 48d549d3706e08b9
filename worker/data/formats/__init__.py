"""Parsers of the data formats a reference may name (DESIGN §3): bytes -> arrays.

Each reader takes a seekable binary stream, the :class:`~worker.refs.DataRef` (for its
format options) and the JSON path (for messages), and returns :class:`Parsed`: the values
as an ndarray or scipy sparse matrix, plus the labels when the file carries them (svmlight
always; csv and parquet with ``label_column``). Readers raise
:class:`~worker.errors.DataError` for problems they can name; anything else a parser of
untrusted bytes throws is wrapped by the caller.

=============  ================================  =========================================
format         module                            values
=============  ================================  =========================================
``npy``        :mod:`.numpy_files`               any array ``numpy.save`` wrote
``npz``        :mod:`.numpy_files`               ``numpy.savez`` member or scipy sparse
``csv``        :mod:`.tabular`                   dense (rows, selected columns)
``parquet``    :mod:`.tabular`                   dense (rows, selected columns)
``svmlight``   :mod:`.svmlight`                  CSR (rows, n_features), with labels
``mtx``        :mod:`.matrix_market`             COO (coordinate) or dense (array)
=============  ================================  =========================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from worker.data.formats.matrix_market import read_mtx
from worker.data.formats.numpy_files import read_npy, read_npz
from worker.data.formats.parsed import Parsed, Values
from worker.data.formats.svmlight import read_svmlight
from worker.data.formats.tabular import read_csv, read_parquet
from worker.data.refs import DataRef

__all__ = ["READERS", "Parsed", "Reader", "Values"]

Reader = Callable[[BinaryIO, DataRef, str], Parsed]

#: Format -> reader.
READERS: dict[str, Reader] = {"npy": read_npy, "npz": read_npz, "csv": read_csv,
                              "parquet": read_parquet, "svmlight": read_svmlight,
                              "mtx": read_mtx}
