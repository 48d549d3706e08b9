"""Arrays in a spec become data: URIs whose bytes the engine reads back bit for bit."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from lighttouch.arrays import encode_arrays
from worker.data.read import read_matrix, read_vector
from worker.data.refs import DataRef
from worker.settings import data_settings

FLOATS = st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.bool_])


def _read(ref: dict, rows: int) -> np.ndarray:
    model = DataRef.model_validate(ref)
    if rows == 1:
        return read_vector(model, "v", roots=[], settings=data_settings())
    return read_matrix(model, "m", roots=[], settings=data_settings())


def _dense(matrix) -> np.ndarray:
    """The reader makes mostly-zero matrices CSR and dense-ish sparse ones arrays."""
    return matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)


@settings(max_examples=60, deadline=None)
@given(arrays(FLOATS, array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6),
              elements={"allow_nan": False, "allow_infinity": False}))
def test_any_numeric_array_travels_with_the_same_bits_and_reads_as_its_values(array):
    ref = encode_arrays({"x": array})["x"]
    assert ref["format"] == "npy" and ref["uri"].startswith("data:application/x-npy;base64,")
    payload = np.load(io.BytesIO(base64.b64decode(ref["uri"].partition(",")[2])))
    assert payload.dtype == array.dtype and payload.tobytes() == array.tobytes()
    received = _dense(_read(ref, array.ndim))
    assert np.array_equal(received.reshape(array.shape), array.astype(np.float64))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.integers(1, 8), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_sparse_matrices_travel_as_npz(rows, columns, density, seed):
    matrix = sp.random(rows, columns, density=density, format="csr", random_state=seed)
    ref = encode_arrays([matrix])[0]
    received = read_matrix(DataRef.model_validate(ref), "m", roots=[], settings=data_settings())
    assert ref["format"] == "npz" and received.shape == matrix.shape
    assert np.array_equal(_dense(received), matrix.toarray())


def test_pandas_objects_and_numpy_scalars():
    frame = pd.DataFrame({"a": [0.1, 0.2], "b": [1, 2]})
    encoded = encode_arrays({"m": frame, "v": frame["a"], "s": np.float32(0.5), "k": [1, "x"]})
    np.testing.assert_array_equal(_read(encoded["m"], 2), frame.to_numpy(dtype=np.float64))
    assert _read(encoded["m"], 2).dtype == np.float64
    np.testing.assert_array_equal(_read(encoded["v"], 1), [0.1, 0.2])
    assert encoded["s"] == 0.5 and type(encoded["s"]) is float and encoded["k"] == [1, "x"]


def test_an_array_of_strings_is_refused_naming_its_place():
    with pytest.raises(TypeError, match=r"objective\.data\.groups\.g: an array of"):
        encode_arrays({"objective": {"data": {"groups": {"g": np.array(["a", "b"])}}}})
