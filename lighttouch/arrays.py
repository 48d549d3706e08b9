"""Arrays in a spec, sent as ``data:`` URIs of ``.npy``/``.npz`` bytes, never as JSON numbers.

Wherever a spec holds a matrix or a vector, a Python caller may put a numpy array, a scipy
sparse matrix or array, or a pandas DataFrame or Series. :func:`encode_arrays` replaces each
with a data reference ``{"uri": "data:application/x-npy;base64,...", "format": "npy"}``
(``numpy.save`` of the array as it is, so the engine reads the very same bits), or an
``.npz`` written by ``scipy.sparse.save_npz`` for a sparse one. base64 makes the bytes 4/3 as
large; a service refuses bodies over its ``LIGHTTOUCH_MAX_BODY_BYTES`` (16 MiB by default,
so about 12 MiB of arrays) with a 413 problem, and larger data belongs in files the service
reads by URI (``file://`` under a data root, ``http(s)://``, ``s3://``).

>>> import numpy as np
>>> encode_arrays({"c": np.zeros(2)})["c"]["format"]
'npy'
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import scipy.sparse as sp


def encode_arrays(value: Any, path: str = "") -> Any:
    """A copy of the JSON value ``value`` with every array replaced by a data reference
    (numpy scalars become Python numbers); TypeError naming the path of an array that holds
    no numbers."""
    if isinstance(value, dict):
        return {key: encode_arrays(item, f"{path}.{key}" if path else str(key))
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encode_arrays(item, f"{path}[{k}]") for k, item in enumerate(value)]
    if sp.issparse(value):
        return data_ref(_npz_bytes(value), "npz")
    if isinstance(value, np.generic):
        return value.item()
    array = _as_array(value)
    if array is None:
        return value
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise TypeError(f"{path or 'spec'}: an array of {array.dtype} values; the engine "
                        "reads numbers (bool, integer or float): encode categories first")
    return data_ref(npy_bytes(array), "npy")


def _as_array(value: Any) -> np.ndarray | None:
    """``value`` as a numpy array if it is one, or a pandas object (None otherwise)."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "to_numpy") and hasattr(value, "dtypes" if hasattr(value, "columns")
                                               else "dtype"):
        return value.to_numpy()
    return None


def npy_bytes(array: np.ndarray) -> bytes:
    """``numpy.save`` of ``array`` (no pickles)."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _npz_bytes(matrix: sp.spmatrix | sp.sparray) -> bytes:
    buffer = io.BytesIO()
    kept = matrix if matrix.format in ("csr", "csc", "coo", "bsr", "dia") else matrix.tocsr()
    sp.save_npz(buffer, kept, compressed=False)
    return buffer.getvalue()


def data_ref(payload: bytes, fmt: str) -> dict[str, str]:
    """A spec data reference carrying ``payload`` (npy or npz bytes) in its URI."""
    text = base64.b64encode(payload).decode("ascii")
    return {"uri": f"data:application/x-{fmt};base64,{text}", "format": fmt}
