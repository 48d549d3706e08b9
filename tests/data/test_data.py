"""Data values of a spec (worker.data.refs): inline values, data: URIs, what data must be to
be read, and the models' errors."""

from __future__ import annotations

import base64
import io
from urllib.parse import quote_from_bytes

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from tests.data.helpers import (
    MATRIX,
    VECTOR,
    as_dense,
    data_error,
    data_uri,
    matrix,
    npy_bytes,
    npy_ref,
    npz_bytes,
    sparse_npz_bytes,
    validation_error,
    vector,
)
from worker.data.refs import CooMatrix, DataRef
from worker.errors import DataError

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


# -- inline values -----------------------------------------------------------------------------

@given(st.integers(0, 6).flatmap(
    lambda width: st.lists(st.lists(finite, min_size=width, max_size=width), max_size=6)))
def test_inline_dense_round_trip(rows):
    result = matrix(rows)
    assert isinstance(result, np.ndarray) and result.dtype == np.float64
    assert result.shape == (len(rows), len(rows[0]) if rows else 0)
    np.testing.assert_array_equal(result, np.array(rows, dtype=np.float64).reshape(result.shape))


@given(st.lists(finite, max_size=20))
def test_inline_vector_round_trip(values):
    result = vector(values)
    assert result.dtype == np.float64 and result.shape == (len(values),)
    np.testing.assert_array_equal(result, values)


def test_ragged_rows_refused():
    assert "row 2 has length 1 but row 0 has length 2" in data_error([[1, 2], [3, 4], [5]])


def test_inline_numbers_must_be_numbers():
    assert validation_error([[1, True]])[0]["loc"] == (0, 1)
    assert validation_error([[1, "2"]])[0]["loc"] == (0, 1)
    assert validation_error([1, None], VECTOR)[0]["loc"] == (1,)


coo_inputs = st.tuples(st.integers(1, 8), st.integers(1, 8)).flatmap(
    lambda shape: st.lists(
        st.tuples(st.integers(0, shape[0] - 1), st.integers(0, shape[1] - 1),
                  st.floats(-1e6, 1e6)), max_size=30).map(lambda entries: (shape, entries)))


@given(coo_inputs)
def test_coo_round_trip_matches_scipy(case):
    shape, entries = case
    rows, cols, values = (list(column) for column in zip(*entries, strict=True)) if entries \
        else ([], [], [])
    result = matrix({"format": "coo", "shape": list(shape), "row": rows, "col": cols,
                     "data": values})
    expected = sp.coo_matrix((np.array(values, dtype=np.float64),
                              (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
                             shape=shape).toarray()
    assert isinstance(result, sp.csr_matrix) and result.dtype == np.float64
    assert result.has_canonical_format and result.shape == shape
    np.testing.assert_allclose(result.toarray(), expected, rtol=1e-12, atol=1e-9)


def test_coo_duplicates_are_summed():
    result = matrix({"format": "coo", "shape": [2, 2], "row": [0, 0, 1], "col": [1, 1, 0],
                     "data": [1.5, 2.0, 3.0]})
    assert result.nnz == 2
    np.testing.assert_array_equal(result.toarray(), [[0, 3.5], [3, 0]])


@pytest.mark.parametrize(("change", "message"), [
    ({"row": [0, 4096, 9000]}, "row[1] = 4096 is out of range for shape[0] = 4096"),
    ({"col": [0, -1, 2]}, "col[1] = -1 is out of range for shape[1] = 8"),
    ({"data": [1.0]}, "row, col and data need equal lengths, got 3, 3 and 1"),
])
def test_coo_entries_checked(change, message):
    value = {"format": "coo", "shape": [4096, 8], "row": [0, 1, 2], "col": [0, 1, 2],
             "data": [1.0, 2.0, 3.0]} | change
    errors = validation_error(value)
    assert len(errors) == 1 and errors[0]["loc"] == () and message in errors[0]["msg"]


def test_coo_rejects_unknown_fields_and_negative_shape():
    base = {"format": "coo", "shape": [2, 2], "row": [], "col": [], "data": []}
    assert validation_error(base | {"nnz": 0})[0]["loc"] == ("nnz",)
    assert validation_error(base | {"shape": [-1, 2]})[0]["loc"] == ("shape", 0)


def test_errors_sit_at_the_value_json_path():
    errors = validation_error({"format": "coo", "shape": [2, 2], "row": [0, "x"], "col": [0, 1],
                               "data": [1.0, 2.0]})
    assert errors[0]["loc"] == ("row", 1)
    assert [e["loc"] for e in validation_error({"uri": 5})] == [("uri",)]
    assert validation_error(5)[0]["type"] == "matrix_type"
    assert validation_error("x", VECTOR)[0]["type"] == "vector_type"


# -- data: URIs ----------------------------------------------------------------------------

def test_data_uri_npy_matrix_and_vector():
    dense = np.arange(12, dtype=np.int32).reshape(3, 4)
    result = matrix(npy_ref(dense))
    assert result.dtype == np.float64
    np.testing.assert_array_equal(result, dense)
    np.testing.assert_array_equal(vector(npy_ref(np.arange(5.0))),
                                  np.arange(5.0))


def test_data_uri_percent_encoded_with_format_parameter():
    uri = "data:application/octet-stream;format=npy," + quote_from_bytes(npy_bytes(np.eye(2)))
    np.testing.assert_array_equal(as_dense(matrix({"uri": uri})), np.eye(2))


def test_data_uri_base64_may_be_wrapped():
    encoded = base64.encodebytes(npy_bytes(np.eye(3))).decode()  # newline every 76 chars
    assert "\n" in encoded
    result = matrix({"uri": "data:;base64," + encoded, "format": "npy"})
    np.testing.assert_array_equal(as_dense(result), np.eye(3))


def test_data_uri_npz_dense():
    a, b = np.eye(2), np.ones((3, 2))
    both = data_uri(npz_bytes(a=a, b=b), "application/x-npz")
    np.testing.assert_array_equal(as_dense(matrix({"uri": both, "key": "b"})), b)
    only = data_uri(npz_bytes(only=a), "application/x-npz")
    np.testing.assert_array_equal(as_dense(matrix({"uri": only})), a)
    assert "holds 2 arrays ('a', 'b'); set \"key\"" in data_error({"uri": both})
    assert "has no array 'c'; it holds 'a', 'b'" in data_error({"uri": both, "key": "c"})


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "bsr", "dia", "csr_array"])
def test_data_uri_npz_scipy_sparse(kind):
    dense = np.array([[0, 2.5, 0, 0], [1, 0, 0, -3], [0, 0, 0, 0]])
    stored = sp.csr_array(dense) if kind == "csr_array" else sp.csr_matrix(dense).asformat(kind)
    result = matrix({"uri": data_uri(sparse_npz_bytes(stored), "application/x-npz")})
    assert isinstance(result, sp.csr_matrix) and result.dtype == np.float64
    np.testing.assert_array_equal(result.toarray(), dense)


def test_format_inference_and_explicit_format():
    npy = data_uri(npy_bytes(np.eye(2)), "application/octet-stream")
    assert MATRIX.validate_python({"uri": npy, "format": "npy"}).format == "npy"
    assert "cannot tell the format of this data: URI" in validation_error({"uri": npy})[0]["msg"]
    assert DataRef(uri="file:///d/x.NPZ").format == "npz"
    assert DataRef(uri="https://h/x.parquet?sig=1#frag").format == "parquet"
    assert DataRef(uri="data:text/csv,a,b").format == "csv"
    assert "cannot tell the format from the URI" in validation_error({"uri": "file:///x"})[0]["msg"]


def test_data_ref_options_and_digest_checked():
    assert "option 'key' applies to npz data only" in \
        validation_error({"uri": "file:///x.npy", "key": "a"})[0]["msg"]
    assert "option 'header' applies to csv" in \
        validation_error({"uri": "file:///x.npz", "header": False})[0]["msg"]
    assert DataRef(uri="file:///x.csv", header=False, label_column=0).label_column == 0
    assert "64 hexadecimal digits" in validation_error({"uri": "file:///x.npy",
                                                        "sha256": "abc"})[0]["msg"]
    assert DataRef(uri="file:///x.npy", sha256="AB" * 32).sha256 == "ab" * 32
    assert validation_error({"uri": "file:///x.npy", "mmap": True})[0]["loc"] == ("mmap",)


def test_malformed_data_uris():
    errors = validation_error({"uri": "data:application/x-npy;base64"})
    assert "no ',' separates" in errors[0]["msg"]
    assert "no ',' separates" in data_error({"uri": "data:;base64", "format": "npy"})
    assert "cannot decode the data: URI" in data_error({"uri": "data:application/x-npy;base64,A"})
    assert "format is npy but the data is not numpy data" in \
        data_error({"uri": "data:application/x-npy;base64,AAAA"})
    assert "format is npy but the data is an .npz (zip) archive" in \
        data_error({"uri": data_uri(npz_bytes(a=np.eye(2))), "format": "npy"})
    assert "format is npz but the data is an .npy array" in \
        data_error({"uri": data_uri(npy_bytes(np.eye(2))), "format": "npz"})


@settings(max_examples=200)
@given(st.binary(max_size=400), st.sampled_from(["npy", "npz"]), st.booleans())
def test_arbitrary_bytes_give_data_errors(payload, fmt, with_magic):
    prefix = {"npy": b"\x93NUMPY", "npz": b"PK\x03\x04"}[fmt] if with_magic else b""
    for reader in (matrix, vector):
        with pytest.raises(DataError):
            reader({"uri": data_uri(prefix + payload), "format": fmt})


@settings(max_examples=200)
@given(st.data())
def test_corrupted_archives_give_data_errors_or_arrays(draw):
    original = draw.draw(st.sampled_from([
        npy_bytes(np.eye(3)), npz_bytes(a=np.eye(3)),
        sparse_npz_bytes(sp.random(5, 4, density=0.5, format="csr", random_state=1))]))
    position = draw.draw(st.integers(0, len(original) - 1))
    corrupted = bytearray(original)
    corrupted[position] = draw.draw(st.integers(0, 255))
    fmt = "npy" if original.startswith(b"\x93NUMPY") else "npz"
    try:
        result = matrix({"uri": data_uri(bytes(corrupted)), "format": fmt})
    except DataError:
        return
    assert result.ndim == 2 and result.dtype == np.float64


# -- what the data must be -----------------------------------------------------------------

def test_vector_with_infinite_entries_when_allowed():
    values = [-np.inf, 0.0, np.inf]
    np.testing.assert_array_equal(vector(values, allow_infinite=True), values)
    stored = npy_ref(np.array([np.inf, -np.inf]))
    np.testing.assert_array_equal(vector(stored, allow_infinite=True), [np.inf, -np.inf])
    with pytest.raises(DataError, match=r"index 1 is nan; every value must be a number "
                                        r"\(±inf is allowed here\)"):
        vector([np.inf, np.nan], allow_infinite=True)
    assert "index 0 is inf; every value must be finite" in data_error([np.inf], reader=vector)


def test_reference_matrices_are_dense_or_csr_by_density():
    half = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert isinstance(matrix(npy_ref(half)), np.ndarray)
    sparse_enough = np.eye(3)
    assert isinstance(matrix(npy_ref(sparse_enough)), sp.csr_matrix)
    full = sp.csr_matrix(np.ones((2, 3)))
    stored = data_uri(sparse_npz_bytes(full), "application/x-npz")
    assert isinstance(matrix({"uri": stored}), np.ndarray)
    assert isinstance(matrix([[0.0, 0.0], [0.0, 1.0]]), np.ndarray)  # inline keeps its form


@pytest.mark.parametrize(("stored", "where"), [
    (np.array([[1.0, 2.0], [3.0, np.nan]]), "row 1 column 1 is nan"),
    (sp.csr_matrix(([1.0, -np.inf], ([0, 2], [3, 1])), shape=(3, 4)), "row 2 column 1 is -inf"),
])
def test_nonfinite_matrix_entry_located(stored, where):
    payload = sparse_npz_bytes(stored) if sp.issparse(stored) else npy_bytes(stored)
    text = data_error({"uri": data_uri(payload), "format": "npz" if sp.issparse(stored) else "npy"})
    assert f"{where}; every value must be finite" in text


def test_nonfinite_inline_values_located():
    assert "row 0 column 2 is inf" in data_error([[1, 2, float("inf")]])
    assert "row 1 column 0 is nan" in data_error({"format": "coo", "shape": [2, 2],
                                                  "row": [1], "col": [0], "data": [float("nan")]})
    assert "index 3 is nan" in data_error([0, 1, 2, float("nan")], reader=vector)


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="platform: long double is float64 here")
def test_values_beyond_float64_are_reported_as_infinite():
    stored = np.array([0, np.finfo(np.longdouble).max], dtype=np.longdouble)
    assert "index 1 is inf" in data_error(npy_ref(stored), reader=vector)


def test_wrong_dimensionality_refused():
    assert "found an array of shape (3,); need a 2-D array" in \
        data_error(npy_ref(np.zeros(3)))
    assert "found an array of shape (2, 2); need a 1-D array of shape (n,)" in \
        data_error(npy_ref(np.eye(2)), reader=vector)
    sparse = data_uri(sparse_npz_bytes(sp.eye(2, format="csr")), "application/x-npz")
    assert "found a sparse matrix of shape (2, 2); need a dense 1-D array" in \
        data_error({"uri": sparse}, reader=vector)
    assert "found an array of shape (); need a 2-D array" in \
        data_error(npy_ref(np.float64(1.0)))


def test_non_numeric_arrays_refused():
    buffer = io.BytesIO()
    np.save(buffer, np.array([1, "a"], dtype=object), allow_pickle=True)
    assert "Object arrays cannot be loaded when allow_pickle=False" in \
        data_error({"uri": data_uri(buffer.getvalue())}, reader=vector)
    assert "holds complex128 values; need real numbers" in \
        data_error(npy_ref(np.array([1 + 2j])), reader=vector)
    assert "holds <U1 values" in data_error(npy_ref(np.array(["a"])),
                                            reader=vector)
    np.testing.assert_array_equal(vector(npy_ref(np.array([True, False]))),
                                  [1.0, 0.0])


# -- the models never fail with anything but ValidationError -------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
field_names = st.sampled_from(["format", "shape", "row", "col", "data", "uri", "key", "header",
                               "columns", "label_column", "zero_based", "n_features", "sha256"])
field_values = json_values | st.sampled_from(
    ["coo", "npy", "npz", "csv", "parquet", "svmlight", "mtx", "file:///x.npz", "data:,",
     "data:application/x-npy;base64,", "https://h/x.csv", "a" * 64, [2, 3], [0, 1], [1.5]])
spec_like = st.dictionaries(field_names, field_values, max_size=6) | json_values


MODELS = (MATRIX, VECTOR, TypeAdapter(CooMatrix), TypeAdapter(DataRef))


@settings(max_examples=500)
@given(spec_like)
def test_models_raise_only_validation_errors(value):
    for model in MODELS:
        try:
            model.validate_python(value)
        except ValidationError:
            pass
