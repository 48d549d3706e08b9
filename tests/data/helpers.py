"""Helpers of the data tests: encoded payloads, readers with no data roots, error texts, and
the fixture that gives every test its own parsed-data cache."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from pydantic import TypeAdapter, ValidationError

from worker.data.read import read_matrix, read_vector
from worker.data.refs import MatrixValue, VectorValue
from worker.errors import DataError
from worker.settings import data_settings

MATRIX = TypeAdapter(MatrixValue)
VECTOR = TypeAdapter(VectorValue)
PATH = "objective.data.features"
NO_ROOTS: list[Path] = []


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz_bytes(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def sparse_npz_bytes(matrix: sp.spmatrix) -> bytes:
    buffer = io.BytesIO()
    sp.save_npz(buffer, matrix)
    return buffer.getvalue()


def data_uri(payload: bytes, media: str = "application/x-npy") -> str:
    return f"data:{media};base64,{base64.b64encode(payload).decode()}"


def npy_ref(array: np.ndarray) -> dict[str, str]:
    """A data reference to ``array`` as an ``npy`` file in a ``data:`` URI."""
    return {"uri": data_uri(npy_bytes(array))}


@pytest.fixture(autouse=True)
def isolated_data_cache(monkeypatch, tmp_path_factory):
    """Every test gets its own, empty parsed-data cache."""
    monkeypatch.setenv("LIGHTTOUCH_DATA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def as_dense(result: np.ndarray | sp.csr_matrix) -> np.ndarray:
    return result.toarray() if sp.issparse(result) else result


def matrix(value: object, roots: list[Path] = NO_ROOTS) -> np.ndarray | sp.csr_matrix:
    return read_matrix(MATRIX.validate_python(value), PATH, roots=roots, settings=data_settings())


def vector(value: object, roots: list[Path] = NO_ROOTS, allow_infinite: bool = False
           ) -> np.ndarray:
    return read_vector(VECTOR.validate_python(value), PATH, roots=roots,
                       allow_infinite=allow_infinite, settings=data_settings())


def data_error(value: object, *, reader=matrix, roots: list[Path] = NO_ROOTS) -> str:
    with pytest.raises(DataError) as info:
        reader(value, roots)
    message = str(info.value)
    assert message.startswith(PATH + ": ")
    return message


def validation_error(value: object, adapter: TypeAdapter = MATRIX) -> list[dict]:
    with pytest.raises(ValidationError) as info:
        adapter.validate_python(value)
    return info.value.errors()
