"""file:// data references under the data roots, and what data must be to be read."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
import scipy.sparse as sp

from tests.data.helpers import (
    NO_ROOTS,
    PATH,
    VECTOR,
    as_dense,
    data_error,
    data_uri,
    matrix,
    npy_bytes,
    sparse_npz_bytes,
    vector,
)
from worker.data.read import read_vector
from worker.data.sources import local
from worker.errors import DataError
from worker.settings import data_settings

# -- file:// URIs --------------------------------------------------------------------------

def test_file_uri_npy_and_npz_under_root(tmp_path):
    dense = np.arange(6.0).reshape(2, 3)
    np.save(tmp_path / "dense.npy", dense)
    np.savez(tmp_path / "plain.npz", w=np.arange(3.0))
    (tmp_path / "sub").mkdir()
    sp.save_npz(tmp_path / "sub" / "sparse matrix.npz", sp.csr_matrix(dense))
    roots = [tmp_path]
    np.testing.assert_array_equal(as_dense(matrix({"uri": (tmp_path / "dense.npy").as_uri()},
                                                  roots)), dense)
    np.testing.assert_array_equal(vector({"uri": (tmp_path / "plain.npz").as_uri()}, roots),
                                  np.arange(3.0))
    sparse = matrix({"uri": (tmp_path / "sub" / "sparse matrix.npz").as_uri()}, roots)
    np.testing.assert_array_equal(as_dense(sparse), dense)
    localhost = "file://localhost" + (tmp_path / "dense.npy").as_posix()
    np.testing.assert_array_equal(as_dense(matrix({"uri": localhost}, roots)), dense)


def test_symlink_inside_root_is_followed(tmp_path):
    np.save(tmp_path / "target.npy", np.eye(2))
    (tmp_path / "link.npy").symlink_to(tmp_path / "target.npy")
    link = (tmp_path / "link.npy").as_uri()
    np.testing.assert_array_equal(as_dense(matrix({"uri": link}, [tmp_path])), np.eye(2))


@pytest.fixture
def outside(tmp_path):
    """A root directory, and a readable .npy file outside it."""
    root = tmp_path / "root"
    root.mkdir()
    np.save(tmp_path / "secret.npy", np.eye(2))
    (root / "escape.npy").symlink_to(tmp_path / "secret.npy")
    return root


@pytest.fixture
def nothing_opened(monkeypatch):
    """Fail the test if a file:// source opens any file."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"opened {args}")
    monkeypatch.setattr(local, "open", refuse, raising=False)


@pytest.mark.parametrize(("uri", "message"), [
    ("file:///etc/passwd", "is outside the data roots"),
    ("file://{root}/../secret.npy", "contains a '..' segment"),
    ("file://{root}/%2e%2e/secret.npy", "contains a '..' segment"),
    ("file://{root}/sub/../../secret.npy", "contains a '..' segment"),
    ("file://{root}/escape.npy", "is outside the data roots"),
    ("file://{root}", "is not an existing regular file"),
    ("file://{root}/missing.npy", "is not an existing regular file"),
    ("file://evil.example{root}/escape.npy", "names a host, query or fragment"),
    ("file:relative/x.npy", "does not hold an absolute path"),
])
def test_file_uri_escapes_refused_before_reading(outside, nothing_opened, uri, message):
    uri = uri.format(root=outside.as_posix())
    assert message in data_error({"uri": uri, "format": "npy"}, roots=[outside])


def test_no_roots_means_no_files(outside, nothing_opened):
    text = data_error({"uri": (outside / "escape.npy").as_uri()})
    assert "outside the data roots (none configured)" in text


def test_sha256_verified(tmp_path):
    np.save(tmp_path / "x.npy", np.eye(2))
    digest = hashlib.sha256((tmp_path / "x.npy").read_bytes()).hexdigest()
    uri = (tmp_path / "x.npy").as_uri()
    np.testing.assert_array_equal(as_dense(matrix({"uri": uri, "sha256": digest.upper()},
                                                  [tmp_path])), np.eye(2))
    wrong = "0" * 64
    text = data_error({"uri": uri, "sha256": wrong}, roots=[tmp_path])
    assert f"sha256 mismatch: the data hashes to {digest} but the reference says {wrong}" in text
    payload = npy_bytes(np.arange(3.0))
    good = hashlib.sha256(payload).hexdigest()
    np.testing.assert_array_equal(vector({"uri": data_uri(payload), "sha256": good}),
                                  np.arange(3.0))


# -- what the data must be -----------------------------------------------------------------

def test_unsupported_schemes_refused_before_opening(nothing_opened):
    for uri, found in [("ftp://example.com/x.npy", "scheme ftp:"),
                       ("gopher://h/x.npy", "scheme gopher:"), ("x.npy", "no scheme")]:
        assert f"has {found}, which is not supported; use data:, file:, http:, https:, s3:" \
            in data_error({"uri": uri})


def test_vector_with_infinite_entries_when_allowed():
    values = [-np.inf, 0.0, np.inf]
    np.testing.assert_array_equal(read_vector(VECTOR.validate_python(values), PATH,
                                              roots=NO_ROOTS, allow_infinite=True,
                                              settings=data_settings()), values)
    stored = {"uri": data_uri(npy_bytes(np.array([np.inf, -np.inf])))}
    np.testing.assert_array_equal(
        read_vector(VECTOR.validate_python(stored), PATH, roots=NO_ROOTS, allow_infinite=True,
                    settings=data_settings()),
        [np.inf, -np.inf])
    with pytest.raises(DataError, match=r"index 1 is nan; every value must be a number "
                                        r"\(±inf is allowed here\)"):
        read_vector(VECTOR.validate_python([np.inf, np.nan]), PATH, roots=NO_ROOTS,
                    allow_infinite=True, settings=data_settings())
    assert "index 0 is inf; every value must be finite" in data_error([np.inf], reader=vector)


def test_reference_matrices_are_dense_or_csr_by_density():
    half = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert isinstance(matrix({"uri": data_uri(npy_bytes(half))}), np.ndarray)
    sparse_enough = np.eye(3)
    assert isinstance(matrix({"uri": data_uri(npy_bytes(sparse_enough))}), sp.csr_matrix)
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
    assert "index 1 is inf" in data_error({"uri": data_uri(npy_bytes(stored))}, reader=vector)


def test_wrong_dimensionality_refused():
    assert "found an array of shape (3,); need a 2-D array" in \
        data_error({"uri": data_uri(npy_bytes(np.zeros(3)))})
    assert "found an array of shape (2, 2); need a 1-D array of shape (n,)" in \
        data_error({"uri": data_uri(npy_bytes(np.eye(2)))}, reader=vector)
    sparse = data_uri(sparse_npz_bytes(sp.eye(2, format="csr")), "application/x-npz")
    assert "found a sparse matrix of shape (2, 2); need a dense 1-D array" in \
        data_error({"uri": sparse}, reader=vector)
    assert "found an array of shape (); need a 2-D array" in \
        data_error({"uri": data_uri(npy_bytes(np.float64(1.0)))})


def test_non_numeric_arrays_refused():
    buffer = io.BytesIO()
    np.save(buffer, np.array([1, "a"], dtype=object), allow_pickle=True)
    assert "Object arrays cannot be loaded when allow_pickle=False" in \
        data_error({"uri": data_uri(buffer.getvalue())}, reader=vector)
    assert "holds complex128 values; need real numbers" in \
        data_error({"uri": data_uri(npy_bytes(np.array([1 + 2j])))}, reader=vector)
    assert "holds <U1 values" in data_error({"uri": data_uri(npy_bytes(np.array(["a"])))},
                                            reader=vector)
    np.testing.assert_array_equal(vector({"uri": data_uri(npy_bytes(np.array([True, False])))}),
                                  [1.0, 0.0])


