"""csv, parquet, svmlight and mtx references against numpy/scipy/sklearn/pyarrow oracles."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from tests.data.helpers import MATRIX, PATH, VECTOR, as_dense, data_uri, isolated_data_cache
from worker.data.read import read_examples, read_matrix, read_vector
from worker.datasets.adult import DATA
from worker.errors import DataError
from worker.settings import data_settings

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

ADULT = DATA / "adult.data"
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
                 "hours-per-week"]


def written(tmp_path: Path, name: str, payload: bytes | str) -> str:
    target = tmp_path / name
    if isinstance(payload, str):
        target.write_text(payload)
    else:
        target.write_bytes(payload)
    return target.as_uri()


def load(ref: dict, tmp_path: Path):
    return read_matrix(MATRIX.validate_python(ref), PATH, roots=[tmp_path],
                       settings=data_settings())


def load_vector(ref: dict, tmp_path: Path):
    return read_vector(VECTOR.validate_python(ref), PATH, roots=[tmp_path],
                       settings=data_settings())


def examples(ref: dict, tmp_path: Path, labels: dict | None = None):
    return read_examples(MATRIX.validate_python(ref),
                         None if labels is None else VECTOR.validate_python(labels),
                         "objective.data", roots=[tmp_path], settings=data_settings())


def failure(ref: dict, tmp_path: Path, reader=load) -> str:
    with pytest.raises(DataError) as info:
        reader(ref, tmp_path)
    return str(info.value)


def random_matrix(seed: int, density: float, shape=(60, 9)) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    matrix = sp.random(*shape, density=density, format="csr", random_state=seed)
    matrix.data = rng.normal(size=matrix.nnz) * 10.0 ** rng.integers(-12, 12, matrix.nnz)
    return matrix


# -- svmlight ----------------------------------------------------------------------------------

@pytest.mark.parametrize("zero_based", [True, False])
@pytest.mark.parametrize(("seed", "density"), [(0, 0.1), (1, 0.3), (2, 0.9)])
def test_svmlight_round_trip_matches_sklearn(tmp_path, seed, density, zero_based):
    features = random_matrix(seed, density)
    labels = np.random.default_rng(seed).normal(size=features.shape[0])
    buffer = io.BytesIO()
    dump_svmlight_file(features, labels, buffer, zero_based=zero_based)
    uri = written(tmp_path, "data.svm", buffer.getvalue())
    expected, expected_labels = load_svmlight_file(io.BytesIO(buffer.getvalue()),
                                                   n_features=9, zero_based=zero_based)
    ref = {"uri": uri, "zero_based": zero_based, "n_features": 9}
    matrix, read_labels = examples(ref, tmp_path)
    assert isinstance(matrix, sp.csr_matrix)  # examples keep the file's form
    np.testing.assert_array_equal(matrix.toarray(), expected.toarray())
    as_matrix = load(ref, tmp_path)            # a matrix is dense when dense enough
    assert isinstance(as_matrix, sp.csr_matrix if density < 0.5 else np.ndarray)
    np.testing.assert_array_equal(as_dense(as_matrix), expected.toarray())
    np.testing.assert_array_equal(read_labels, expected_labels)
    np.testing.assert_array_equal(load_vector({"uri": uri}, tmp_path), expected_labels)


def test_svmlight_text_variants(tmp_path):
    text = ("# a comment line\n"
            "1 qid:3 1:0.5 3:-2e3 # trailing comment\r\n"
            "\n"
            "-1\t2:1.7976931348623157e308 4:1e-320\n"
            "+1 1:0.1000000000000000055511151231257827 2:inf 3:-0\n"
            "0 2:12345678901234567890")  # no final newline
    uri = written(tmp_path, "variants.libsvm", text)
    expected, expected_labels = load_svmlight_file(io.BytesIO(text.encode()), zero_based=False)
    with pytest.raises(DataError, match="row 2 column 1 is inf"):
        examples({"uri": uri}, tmp_path)
    finite = text.replace("2:inf", "2:7")
    uri = written(tmp_path, "finite.svmlight", finite)
    expected, expected_labels = load_svmlight_file(io.BytesIO(finite.encode()),
                                                   zero_based=False)
    matrix, labels = examples({"uri": uri}, tmp_path)
    np.testing.assert_array_equal(as_dense(matrix), expected.toarray())
    np.testing.assert_array_equal(labels, expected_labels)


def test_svmlight_index_base_and_width(tmp_path):
    uri = written(tmp_path, "x.svm", "1 0:1 2:2\n-1 1:3\n")
    matrix = as_dense(load({"uri": uri}, tmp_path))  # index 0 present: zero-based
    np.testing.assert_array_equal(matrix, [[1, 0, 2], [0, 3, 0]])
    one_based = as_dense(load({"uri": written(tmp_path, "y.svm", "1 1:1 3:2\n")}, tmp_path))
    np.testing.assert_array_equal(one_based, [[1, 0, 2]])
    assert load({"uri": uri, "n_features": 10}, tmp_path).shape == (2, 10)
    assert "row 0 has feature index 0 but the reference says \"zero_based\": false" in \
        failure({"uri": uri, "zero_based": False}, tmp_path)
    assert "row 0 has feature index 2, beyond n_features = 2" in \
        failure({"uri": uri, "n_features": 2}, tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    ("1 1:2\nabc 1:2\n", "line 2: the label 'abc' is not a number"),
    ("1 1:2\n1,2 1:2\n", "line 2: the label '1,2' is not a number"),
    ("1 1:2 7\n", "line 1: '7' is not an <index>:<value> pair"),
    ("1 -1:2\n", "line 1: '-1:2' has an index that is not a whole number"),
    ("1 x:2\n", "line 1: 'x:2' has an index that is not a whole number"),
    ("1 99999999999:2\n", "has an index that is not a whole number from 0 to 2147483647"),
    ("1 1:\n", "line 1: '1:' has a value that is not a number"),
    ("1 1:2.5e\n", "line 1: '1:2.5e' has a value that is not a number"),
    ("1 1:1\n1 2:1.5e-3", "no error"),
    ("1 1:nanx\n", "line 1: the value 'nanx' is not a number"),
    ("1 1:" + "1" * 70 + "\n", "longer than 64 characters"),
])
def test_malformed_svmlight_lines_are_located(tmp_path, text, message):
    uri = written(tmp_path, "bad.svm", text)
    if message == "no error":
        assert load({"uri": uri}, tmp_path).shape == (2, 2)
        return
    assert message in failure({"uri": uri}, tmp_path)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300) | st.text(alphabet="0123456789:.-+e \n#qid", max_size=120)
       .map(str.encode))
def test_arbitrary_svmlight_bytes_give_data_errors_or_matrices(payload):
    ref = {"uri": data_uri(payload, "application/x-svmlight")}
    try:
        result = read_matrix(MATRIX.validate_python(ref), PATH, roots=[], settings=data_settings())
    except DataError:
        return
    assert result.ndim == 2


# -- csv -----------------------------------------------------------------------------------

def csv_text(matrix: np.ndarray, header: list[str] | None) -> str:
    buffer = io.StringIO()
    np.savetxt(buffer, matrix, delimiter=",", fmt="%.17g",
               header=",".join(header) if header else "", comments="")
    return buffer.getvalue()


@pytest.mark.parametrize("density", [0.2, 1.0])
def test_csv_round_trip_with_and_without_header(tmp_path, density):
    values = random_matrix(3, density, shape=(40, 5)).toarray()
    named = written(tmp_path, "named.csv", csv_text(values, ["a", "b", "c", "d", "e"]))
    bare = written(tmp_path, "bare.csv", csv_text(values, None))
    for ref in ({"uri": named}, {"uri": bare, "header": False}):
        result = load(ref, tmp_path)
        assert isinstance(result, np.ndarray if density == 1.0 else sp.csr_matrix)
        np.testing.assert_array_equal(as_dense(result), values)
    np.testing.assert_array_equal(as_dense(load({"uri": named, "columns": ["e", 1]}, tmp_path)),
                                  values[:, [4, 1]])
    np.testing.assert_array_equal(
        as_dense(load({"uri": bare, "header": False, "columns": [3]}, tmp_path)), values[:, [3]])
    np.testing.assert_array_equal(load_vector({"uri": named, "columns": ["c"]}, tmp_path),
                                  values[:, 2])
    matrix, labels = examples({"uri": named, "label_column": "d"}, tmp_path)
    np.testing.assert_array_equal(as_dense(matrix), values[:, [0, 1, 2, 4]])
    np.testing.assert_array_equal(labels, values[:, 3])


def test_adult_numeric_columns_by_name():
    root = ADULT.parent
    uri = ADULT.as_uri()
    ref = {"uri": uri, "format": "csv", "columns": ADULT_NUMERIC}
    result = read_matrix(MATRIX.validate_python(ref), PATH, roots=[root], settings=data_settings())
    expected = np.loadtxt(ADULT, delimiter=",", skiprows=1, usecols=[0, 2, 4, 10, 11, 12],
                          dtype=np.float64)
    assert isinstance(result, np.ndarray) and result.shape == (32561, 6)
    np.testing.assert_array_equal(result, expected)


def test_adult_text_columns_and_class_labels_are_refused_plainly():
    root = [ADULT.parent]
    everything = {"uri": ADULT.as_uri(), "format": "csv"}
    with pytest.raises(DataError) as info:
        read_matrix(MATRIX.validate_python(everything), PATH, roots=root, settings=data_settings())
    assert "column 'workclass' (index 1) holds text such as ' State-gov' at row 0, not " \
           "numbers; select numeric columns with \"columns\"" in str(info.value)
    labelled = everything | {"columns": ADULT_NUMERIC, "label_column": "Y"}
    with pytest.raises(DataError) as info:
        read_examples(MATRIX.validate_python(labelled), None, "objective.data", roots=root,
                      settings=data_settings())
    assert str(info.value).startswith("objective.data.features: label column 'Y' (index 14) "
                                      "holds text such as ' <=50K' at row 0; labels must be "
                                      "numbers: +1/-1 (or 1/0, 0 meaning -1) for hinge")


@pytest.mark.parametrize(("text", "ref", "message"), [
    ("a,b\n1,2\n3,\n", {}, "row 1 column 'b' is empty (a missing value)"),
    ("a,b\n1,2\n3,nan\n", {}, "row 1 column 1 is nan; every value must be finite"),
    ("a,b\n1,2\n3\n", {}, "Expected 2 columns, got 1"),
    ("a,b\n1,2\n", {"columns": ["c"]}, "columns names column 'c', which the file does not have"),
    ("a,b\n1,2\n", {"columns": [5]}, "columns index 5 is out of range: the file has 2 columns"),
    ("1,2\n", {"header": False, "columns": ["a"]}, "the file has no header row"),
    ("a,b\n1,2\n", {"columns": ["a"], "label_column": "a"}, "is both a feature and the label"),
    ("a,b\n1,2\n", {"columns": ["a", "a"]}, "names a column twice"),
    ("", {}, "the csv file is empty"),
    ("a,b\n\xff\xfe,1\n", {}, "invalid UTF8 data; check that the data is a valid .csv file"),
])
def test_malformed_csv(tmp_path, text, ref, message):
    uri = written(tmp_path, "bad.csv", text.encode("latin-1"))
    assert message in failure({"uri": uri} | ref, tmp_path)


# -- parquet -------------------------------------------------------------------------------

def parquet_bytes(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("density", [0.2, 1.0])
def test_parquet_round_trip(tmp_path, density):
    values = random_matrix(4, density, shape=(30, 4)).toarray()
    table = pa.table({"x": values[:, 0], "y": values[:, 1].astype(np.float32),
                      "n": np.arange(30, dtype=np.int16), "flag": np.arange(30) % 2 == 0,
                      "z": values[:, 3], "name": [f"r{i}" for i in range(30)]})
    uri = written(tmp_path, "t.parquet", parquet_bytes(table))
    result = load({"uri": uri, "columns": ["x", "y", "z"]}, tmp_path)
    assert isinstance(result, np.ndarray if density == 1.0 else sp.csr_matrix)
    expected = np.column_stack([values[:, 0], values[:, 1].astype(np.float32), values[:, 3]])
    np.testing.assert_array_equal(as_dense(result), expected)
    matrix, labels = examples({"uri": uri, "columns": [0, 2], "label_column": "flag"}, tmp_path)
    np.testing.assert_array_equal(as_dense(matrix), np.column_stack([values[:, 0],
                                                                     np.arange(30)]))
    np.testing.assert_array_equal(labels, np.arange(30) % 2 == 0)
    assert "column 'name' (index 5) holds string values, not numbers" in \
        failure({"uri": uri}, tmp_path)
    assert "label column 'name' (index 5) holds string values; labels must be numbers" in \
        failure({"uri": uri, "columns": ["x"], "label_column": "name"}, tmp_path)


def test_parquet_nulls_and_garbage(tmp_path):
    uri = written(tmp_path, "n.parquet", parquet_bytes(pa.table({"a": [1.0, None, 3.0]})))
    assert "row 1 column 'a' is empty (a missing value)" in failure({"uri": uri}, tmp_path)
    garbage = written(tmp_path, "g.parquet", b"PAR1 this is not parquet")
    assert "cannot read" in failure({"uri": garbage}, tmp_path)
    truncated = parquet_bytes(pa.table({"a": np.arange(100.0)}))[:-20]
    assert "check that the data is a valid .parquet file" in \
        failure({"uri": written(tmp_path, "t.parquet", truncated)}, tmp_path)


# -- Matrix Market -------------------------------------------------------------------------

def mtx_bytes(matrix, **options) -> bytes:
    buffer = io.BytesIO()
    scipy.io.mmwrite(buffer, matrix, **options)
    return buffer.getvalue()


@pytest.mark.parametrize("stored", [
    random_matrix(5, 0.1), random_matrix(6, 0.8).toarray(),
    sp.csr_matrix(np.array([[2.0, 1.0, 0], [1.0, 0, 0], [0, 0, 3.0]])),  # written symmetric
    sp.csr_matrix(([1, 1], ([0, 2], [1, 0])), shape=(3, 3), dtype=np.int64),
])
def test_mtx_round_trip_matches_scipy(tmp_path, stored):
    uri = written(tmp_path, "m.mtx", mtx_bytes(stored))
    expected = scipy.io.mmread(io.BytesIO(mtx_bytes(stored)))
    expected = expected.toarray() if sp.issparse(expected) else expected
    np.testing.assert_array_equal(as_dense(load({"uri": uri}, tmp_path)), expected)


def test_mtx_column_vector_and_malformed(tmp_path):
    column = written(tmp_path, "b.mtx", mtx_bytes(np.arange(4.0).reshape(4, 1)))
    np.testing.assert_array_equal(load_vector({"uri": column}, tmp_path), np.arange(4.0))
    whole = mtx_bytes(sp.random(5, 5, density=0.5, format="coo", random_state=0))
    cut = whole[:whole.rindex(b"E") + 1]  # the last number loses its exponent digits
    assert "the last line of the Matrix Market file" in \
        failure({"uri": written(tmp_path, "cut.mtx", cut)}, tmp_path)
    short = whole[:whole.rindex(b"\n", 0, len(whole) - 1) + 1]
    assert "Truncated file" in failure({"uri": written(tmp_path, "short.mtx", short)}, tmp_path)
    assert "Not a Matrix Market file" in \
        failure({"uri": written(tmp_path, "x.mtx", b"1 2 3\n")}, tmp_path)


# -- labels from the features file ---------------------------------------------------------

def test_labels_missing_or_given_explicitly(tmp_path):
    np.save(tmp_path / "x.npy", np.eye(2))
    with pytest.raises(DataError, match=r"^objective.data.labels: labels are missing: give "
                                        r"\"labels\", or reference a features file"):
        examples({"uri": (tmp_path / "x.npy").as_uri()}, tmp_path)
    uri = written(tmp_path, "f.csv", "a,b,y\n1,2,1\n3,4,-1\n")
    with pytest.raises(DataError, match="labels are missing"):
        examples({"uri": uri}, tmp_path)
    matrix, labels = examples({"uri": uri, "label_column": "y"}, tmp_path, labels=[1.0, 0.0])
    np.testing.assert_array_equal(as_dense(matrix), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(labels, [1.0, 0.0])


def test_nan_label_in_features_file_is_located(tmp_path):
    uri = written(tmp_path, "l.csv", "a,y\n1,1\n2,nan\n")
    with pytest.raises(DataError, match=r"^objective.data.features: the label of row 1 is nan"):
        examples({"uri": uri, "label_column": "y"}, tmp_path)


def test_an_svmlight_index_past_the_largest_dimension_names_its_row(tmp_path):
    uri = written(tmp_path, "wide.svm", "1 1:1\n1 2000000000:1\n")
    with pytest.raises(DataError, match=r"row 1 has feature index 2,000,000,000: more than "
                                        r"134,217,728 features"):
        load({"uri": uri}, tmp_path)


def test_an_npy_header_claiming_more_than_the_file_holds_is_refused(tmp_path):
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    forged = tmp_path / "forged.npy"
    forged.write_bytes(buffer.getvalue() + bytes(64))
    with pytest.raises(DataError, match=r"claims shape \(1000000000000,\)"):
        load({"uri": forged.as_uri()}, tmp_path)
