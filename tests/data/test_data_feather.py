"""feather (Arrow IPC file) references: file://, http:// and data: URIs against the numpy
arrays written, column selection and labels, refusals, and a solve equal to the same data
as npy."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.data.helpers import MATRIX, PATH, VECTOR, as_dense, data_uri, isolated_data_cache
from tests.data.test_data_http import Server, settings_for
from tests.specs import random_spec
from worker import solve
from worker.data.read import read_examples, read_matrix, read_vector
from worker.errors import DataError
from worker.settings import data_settings

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

MEDIA_TYPE = "application/vnd.apache.arrow.file"


def feather_bytes(table: pa.Table, **options) -> bytes:
    buffer = io.BytesIO()
    feather.write_feather(table, buffer, **options)
    return buffer.getvalue()


def mixed_table(rows: int = 40) -> tuple[pa.Table, np.ndarray]:
    """Numeric columns of several types, a text column and a ±1 label column; and the
    numeric columns x, n, flag, z as a float64 matrix (rows, 4)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=rows) * 10.0 ** rng.integers(-12, 12, rows)
    z = rng.normal(size=rows).astype(np.float32)
    expected = np.column_stack([x, np.arange(rows), np.arange(rows) % 3 == 0, z])
    table = pa.table({"x": x, "n": np.arange(rows, dtype=np.int16),
                      "flag": np.arange(rows) % 3 == 0, "z": z,
                      "name": [f"r{i}" for i in range(rows)],
                      "y": np.where(x > 0, 1.0, -1.0)})
    return table, expected


def written(directory: Path, name: str, payload: bytes) -> str:
    (directory / name).write_bytes(payload)
    return (directory / name).as_uri()


def load(ref: dict, roots: list[Path]):
    return read_matrix(MATRIX.validate_python(ref), PATH, roots=roots, settings=data_settings())


def failure(ref: dict, roots: list[Path]) -> str:
    with pytest.raises(DataError) as info:
        load(ref, roots)
    message = str(info.value)
    assert message.startswith(f"{PATH}: ")
    return message


@pytest.mark.parametrize("compression", ["uncompressed", "lz4", "zstd"])
@pytest.mark.parametrize("extension", [".feather", ".arrow", ".ipc"])
def test_dense_numeric_file_round_trip(tmp_path, compression, extension):
    table, expected = mixed_table()
    payload = feather_bytes(table, compression=compression, chunksize=7)  # six record batches
    uri = written(tmp_path, f"t{extension}", payload)
    result = load({"uri": uri, "columns": ["x", "n", "flag", "z"]}, [tmp_path])
    assert isinstance(result, np.ndarray) and result.dtype == np.float64
    np.testing.assert_array_equal(result, expected)


def test_columns_by_name_or_index_and_a_single_column_as_vector(tmp_path):
    table, expected = mixed_table()
    uri = written(tmp_path, "t.feather", feather_bytes(table))
    np.testing.assert_array_equal(load({"uri": uri, "columns": ["z", 0]}, [tmp_path]),
                                  expected[:, [3, 0]])
    numeric = written(tmp_path, "numeric.feather",
                      feather_bytes(table.select(["x", "n", "flag", "z"])))
    np.testing.assert_array_equal(load({"uri": numeric}, [tmp_path]), expected)
    vector = read_vector(VECTOR.validate_python({"uri": uri, "columns": ["n"]}), PATH,
                         roots=[tmp_path], settings=data_settings())
    np.testing.assert_array_equal(vector, np.arange(40.0))


def test_labels_from_a_named_column(tmp_path):
    table, expected = mixed_table()
    uri = written(tmp_path, "t.feather", feather_bytes(table))
    ref = {"uri": uri, "columns": ["x", "z"], "label_column": "y"}
    features, labels = read_examples(MATRIX.validate_python(ref), None, "objective.data",
                                     roots=[tmp_path], settings=data_settings())
    np.testing.assert_array_equal(as_dense(features), expected[:, [0, 3]])
    np.testing.assert_array_equal(labels, np.where(expected[:, 0] > 0, 1.0, -1.0))


@pytest.fixture
def served(tmp_path):
    """The test HTTP server, serving ``tmp_path / "www"``."""
    root = tmp_path / "www"
    root.mkdir()
    running = Server(root)
    yield running
    running.stop()


def test_over_http(served, tmp_path):
    table, expected = mixed_table()
    (served.directory / "t.arrow").write_bytes(feather_bytes(table, chunksize=9))
    allowed = settings_for(tmp_path, f"127.0.0.1:{served.port}")
    ref = MATRIX.validate_python({"uri": served.url("t.arrow"), "label_column": "y",
                                  "columns": ["x", "n", "flag", "z"]})
    features, labels = read_examples(ref, None, "objective.data", roots=[], settings=allowed)
    np.testing.assert_array_equal(as_dense(features), expected)
    np.testing.assert_array_equal(labels, np.where(expected[:, 0] > 0, 1.0, -1.0))


def test_data_uri_by_media_type_or_format_parameter():
    values = np.arange(12.0).reshape(4, 3)
    payload = feather_bytes(pa.table({f"c{j}": values[:, j] for j in range(3)}))
    np.testing.assert_array_equal(load({"uri": data_uri(payload, MEDIA_TYPE)}, []), values)
    parameter = data_uri(payload, "application/octet-stream;format=feather")
    np.testing.assert_array_equal(load({"uri": parameter}, []), values)


def test_missing_and_non_numeric_columns_are_named(tmp_path):
    table, _ = mixed_table()
    uri = written(tmp_path, "t.feather", feather_bytes(table))
    assert "columns names column 'w', which the file does not have; its columns are 'x', " \
           "'n', 'flag', 'z', 'name', 'y'" in failure({"uri": uri, "columns": ["w"]}, [tmp_path])
    assert "label_column index 9 is out of range: the file has 6 columns" in \
        failure({"uri": uri, "label_column": 9}, [tmp_path])
    assert "column 'name' (index 4) holds string values, not numbers" in \
        failure({"uri": uri}, [tmp_path])
    assert "label column 'name' (index 4) holds string values; labels must be numbers" in \
        failure({"uri": uri, "columns": ["x"], "label_column": "name"}, [tmp_path])
    nulls = written(tmp_path, "n.feather", feather_bytes(pa.table({"a": [1.0, None, 3.0]})))
    assert "row 1 column 'a' is empty (a missing value)" in failure({"uri": nulls}, [tmp_path])


def test_corrupt_and_other_arrow_files_are_refused_plainly(tmp_path):
    whole = feather_bytes(pa.table({"a": np.arange(100.0)}))
    truncated = written(tmp_path, "cut.feather", whole[:-20])
    message = failure({"uri": truncated}, [tmp_path])
    assert f"cannot read '{truncated}' as feather" in message
    assert "check that the data is a valid .feather file" in message
    garbage = written(tmp_path, "g.feather", b"ARROW1\0\0 this is not arrow")
    assert f"cannot read '{garbage}' as feather" in failure({"uri": garbage}, [tmp_path])
    text = written(tmp_path, "t.feather", b"a,b\n1,2\n")
    assert "format is feather but the data is not an Arrow IPC file; set \"format\"" in \
        failure({"uri": text}, [tmp_path])
    stream = io.BytesIO()
    with ipc.new_stream(stream, pa.schema([("a", pa.float64())])) as writer:
        writer.write_table(pa.table({"a": [1.0]}))
    assert "the data is an Arrow IPC stream; write an IPC file instead" in \
        failure({"uri": written(tmp_path, "s.arrow", stream.getvalue())}, [tmp_path])
    version_one = written(tmp_path, "v1.feather", b"FEA1" + whole[4:])
    assert "the data is a Feather V1 file, which is not read" in \
        failure({"uri": version_one}, [tmp_path])


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300), st.booleans())
def test_arbitrary_bytes_give_data_errors(payload, with_magic):
    prefix = b"ARROW1\0\0" if with_magic else b""
    with pytest.raises(DataError):
        load({"uri": data_uri(prefix + payload, MEDIA_TYPE)}, [])


def test_a_solve_on_feather_equals_the_solve_on_npy(tmp_path):
    spec = random_spec("logistic", "mixed", 3, n=120, iterations=4000)
    data = spec["objective"]["data"]
    features, labels = np.array(data.pop("features")), np.array(data.pop("labels"))
    np.save(tmp_path / "x.npy", features)
    np.save(tmp_path / "y.npy", labels)
    columns = {f"f{j}": features[:, j] for j in range(features.shape[1])}
    (tmp_path / "xy.feather").write_bytes(feather_bytes(pa.table(columns | {"y": labels}),
                                                        chunksize=50))
    data.update(features={"uri": (tmp_path / "x.npy").as_uri()},
                labels={"uri": (tmp_path / "y.npy").as_uri()})
    from_npy = solve(spec, roots=[tmp_path])
    data.pop("labels")
    data["features"] = {"uri": (tmp_path / "xy.feather").as_uri(), "label_column": "y"}
    from_feather = solve(spec, roots=[tmp_path])
    assert from_feather.projected.solution == from_npy.projected.solution
    assert [m.solution for m in from_feather.mixture] == [m.solution for m in from_npy.mixture]
    assert from_feather.mean.objective == from_npy.mean.objective
