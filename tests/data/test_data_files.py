"""file:// data references under the data roots."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp

from tests.data.helpers import (
    as_dense,
    data_error,
    data_uri,
    matrix,
    npy_bytes,
    vector,
)
from worker.data.sources import local

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
