"""Partition plans, reads and census (worker.distributed): every splittable format, cut at
any size, gives back exactly the full parse; partitions read only their own bytes, also over
HTTP."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.data.helpers import isolated_data_cache
from tests.data.test_data_http import Server, settings_for
from worker.distributed.census import add_counts, census_of, column_counts, finish, settle
from worker.distributed.chunks import read_chunk
from worker.distributed.partitions import plan_partitions
from worker.distributed.ranges import TAIL_BYTES
from worker.errors import DataError, SpecError
from worker.problem.compile import DataSource, compile_problem
from worker.settings import DataSettings
from worker.spec.models import parse_spec

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

SVMLIGHT = (b"# a comment line\n"
            b"1 1:0.5 3:-2 # trailing comment\n"
            b"\n"
            b"-1 2:1e-3\n"
            b"0 qid:3 1:7 2:0 4:1.25\n"
            b"   \n"
            b"1\n"
            b"-1 4:3 1:1\n"
            b"1 3:2.5")  # no trailing newline


def spec_for(features: dict, labels: dict | None = None, loss: str = "logistic"):
    data = {"features": features} | ({"labels": labels} if labels else {})
    return parse_spec({"objective": {"type": "empirical_risk", "loss": loss, "data": data},
                       "solver": {"algorithm": "svrg_ol"}})


def read_all(spec, roots, partition_rows=10**9, partition_bytes=2**20,
             data_settings: DataSettings | None = None):
    """(features CSR, labels, plan) concatenated over every partition (under the
    environment's data settings unless given)."""
    data_settings = data_settings or DataSettings()
    plan = plan_partitions(spec, roots, partition_rows, partition_bytes, data_settings)
    chunks = [read_chunk(plan, k, data_settings) for k in range(len(plan.pieces))]
    settled = settle(plan, [census_of(chunk, plan.loss) for chunk in chunks])
    rows = [finish(plan, chunk, offset, settled.base, data_settings)
            for chunk, offset in zip(chunks, settled.offsets, strict=True)]
    assert [int(r.first_row) for r in rows] == list(settled.offsets)
    features = sp.vstack([sp.csr_matrix((r.data, r.indices, r.indptr),
                                        shape=(r.labels.size, settled.width)) for r in rows],
                         format="csr")
    counts = functools.reduce(add_counts, [column_counts(chunk) for chunk in chunks])
    shifted = np.zeros(settled.width, dtype=np.int64)
    kept = counts[settled.base:settled.base + settled.width]
    shifted[:kept.size] = kept
    assert np.array_equal(shifted, np.bincount(features.indices, minlength=settled.width))
    return features, np.concatenate([r.labels for r in rows]), plan


def full_parse(spec, roots):
    objective = compile_problem(spec, DataSource(roots, DataSettings())).objective
    features = objective.features.copy()
    features.eliminate_zeros()
    return features, objective.labels


def assert_same(parts, full):
    features, labels, _ = parts
    assert (features != full[0]).nnz == 0 and features.shape == full[0].shape
    assert np.array_equal(features.indices, full[0].indices)
    assert np.array_equal(features.data, full[0].data)
    assert np.array_equal(labels, full[1])


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    dense = rng.normal(size=(53, 5)) * (rng.uniform(size=(53, 5)) < 0.6)
    labels = rng.choice([-1.0, 1.0], size=53)
    table = pa.table({**{f"x{j}": dense[:, j] for j in range(5)}, "y": labels})
    pa_csv.write_csv(table, tmp_path / "d.csv")
    pq.write_table(table, tmp_path / "d.parquet", row_group_size=7)
    feather.write_feather(table, tmp_path / "d.feather", chunksize=7)
    np.save(tmp_path / "x.npy", dense)
    np.save(tmp_path / "y.npy", labels)
    (tmp_path / "d.svm").write_bytes(SVMLIGHT)
    return tmp_path


SMALL = settings(max_examples=25, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


@SMALL
@given(size=st.integers(1, 200))
def test_svmlight_partitions_concatenate_to_the_full_parse(files, size):
    spec = spec_for({"uri": (files / "d.svm").as_uri()})
    assert_same(read_all(spec, [files], partition_bytes=size), full_parse(spec, [files]))


@SMALL
@given(size=st.integers(1, 400), header=st.booleans())
def test_csv_partitions_concatenate_to_the_full_parse(files, size, header):
    path = files / "d.csv"
    if not header:
        path = files / "plain.csv"
        path.write_bytes((files / "d.csv").read_bytes().split(b"\n", 1)[1])
    ref = {"uri": path.as_uri(), "label_column": "y" if header else 5, "header": header}
    spec = spec_for(ref)
    assert_same(read_all(spec, [files], partition_bytes=size), full_parse(spec, [files]))


@SMALL
@given(rows=st.integers(1, 60))
def test_parquet_and_npy_partitions_concatenate_to_the_full_parse(files, rows):
    npy = spec_for({"uri": (files / "x.npy").as_uri()}, {"uri": (files / "y.npy").as_uri()})
    parquet = spec_for({"uri": (files / "d.parquet").as_uri(), "label_column": "y"})
    for spec in (npy, parquet):
        parts = read_all(spec, [files], partition_rows=rows)
        assert_same(parts, full_parse(spec, [files]))
        pieces = parts[2].pieces  # parquet: whole row groups of 7 rows
        assert [p.start for p in pieces[1:]] == [p.stop for p in pieces[:-1]]
        assert all(p.stop - p.start <= max(rows, 7) for p in pieces)


def test_boundaries_on_newlines_and_partitions_without_a_line_start(files):
    path = files / "d.svm"
    spec = spec_for({"uri": path.as_uri()})
    full = full_parse(spec, [files])
    newlines = [k for k, byte in enumerate(SVMLIGHT) if byte == ord("\n")]
    for size in (newlines[1], newlines[1] + 1, 3, 1):  # start exactly on and after a newline
        features, labels, plan = read_all(spec, [files], partition_bytes=size)
        assert_same((features, labels, plan), full)
    path.write_bytes(SVMLIGHT + b"\n")  # with a trailing newline
    assert_same(read_all(spec, [files], partition_bytes=5), full_parse(spec, [files]))


def test_whole_file_formats_are_one_partition(files):
    sp.save_npz(files / "x.npz", sp.csr_matrix(np.load(files / "x.npy")))
    npz = spec_for({"uri": (files / "x.npz").as_uri()}, {"uri": (files / "y.npy").as_uri()})
    labelled = spec_for({"uri": (files / "d.feather").as_uri(), "label_column": "y"})
    for spec in (npz, labelled):
        parts = read_all(spec, [files], partition_rows=5)
        assert parts[2].layout == "whole" and len(parts[2].pieces) == 1
        assert_same(parts, full_parse(spec, [files]))


def test_what_the_driver_reads_instead(files):
    inline = spec_for([[1.0, 2.0]], None)
    assert plan_partitions(inline, [files], 10, 10, DataSettings()) is None
    hashed = spec_for({"uri": (files / "d.svm").as_uri(), "sha256": "0" * 64})
    assert plan_partitions(hashed, [files], 10, 10, DataSettings()) is None


def test_errors_name_the_global_row(files):
    lines = SVMLIGHT.split(b"\n")
    (files / "bad.svm").write_bytes(b"\n".join(lines[:7] + [b"2 1:1"] + lines[7:]))
    spec = spec_for({"uri": (files / "bad.svm").as_uri()})
    with pytest.raises(SpecError, match=r"objective.data.labels\[4\]: 2.0 is not a class"):
        read_all(spec, [files], partition_bytes=9)
    (files / "wide.svm").write_bytes(SVMLIGHT)
    narrow = spec_for({"uri": (files / "wide.svm").as_uri(), "n_features": 3})
    with pytest.raises(DataError, match="row 2 has feature index 4, beyond n_features = 3"):
        read_all(narrow, [files], partition_bytes=11)
    (files / "nan.svm").write_bytes(b"1 1:1\n-1 2:nan\n")
    with pytest.raises(DataError, match="row 1 column 2 is nan"):
        read_all(spec_for({"uri": (files / "nan.svm").as_uri()}), [files], partition_bytes=4)
    rows = [b"x0,x1,y"] + [b"%d.5,%d,%d" % (i % 7, i % 3, 1 - 2 * (i % 2)) for i in range(60)]
    rows[42] = b"1.5,-1"                                      # global row 41 is short
    (files / "short.csv").write_bytes(b"\n".join(rows) + b"\n")
    short = spec_for({"uri": (files / "short.csv").as_uri(), "label_column": "y"})
    with pytest.raises(DataError, match=r"row 41 \('1.5,-1'\) cannot be read as csv: .*"
                                        r"Expected 3 columns, got 2"):
        read_all(short, [files], partition_bytes=50)
    (files / "broken.svm").write_bytes(b"1 1:1\n-1 2:1\n1 x\n")
    with pytest.raises(DataError, match=r"bytes 8-16, counting its lines\): line 1: 'x' is"):
        read_all(spec_for({"uri": (files / "broken.svm").as_uri()}), [files], partition_bytes=8)


class CountingServer(Server):
    """The test HTTP server with Range support, counting the body bytes it sends per path."""

    def _handler(self):
        base, server = super()._handler(), self
        server.sent: dict[str, int] = {}

        class Ranged(base):
            def do_GET(self) -> None:
                path = server.directory / self.path.lstrip("/")
                body = path.read_bytes()
                ranged = self.headers.get("Range")
                if ranged:
                    first, last = ranged.removeprefix("bytes=").split("-")
                    body = body[int(first):int(last) + 1]
                    self.send_response(206)
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                server.sent[self.path] = server.sent.get(self.path, 0) + len(body)
                self.wfile.write(body)

        return Ranged


@pytest.fixture
def ranged_server(files):
    running = CountingServer(files)
    yield running
    running.stop()


def test_http_partitions_read_only_their_bytes(ranged_server, files, tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"{rng.choice([-1, 1])} " + " ".join(f"{j}:{rng.normal():.6f}" for j in
                                                  sorted(rng.choice(40, 6, replace=False)))
             for _ in range(2000)]
    (files / "big.svm").write_text("\n".join(lines) + "\n")
    size, longest = (files / "big.svm").stat().st_size, max(len(line) + 1 for line in lines)
    allowed = settings_for(tmp_path, f"127.0.0.1:{ranged_server.port}")
    spec = spec_for({"uri": ranged_server.url("big.svm")})
    plan = plan_partitions(spec, [], 10, 5000, allowed)
    assert ranged_server.sent.get("/big.svm", 0) == 0  # the plan reads no data lines
    for k, piece in enumerate(plan.pieces):
        ranged_server.sent.clear()
        read_chunk(plan, k, allowed)
        assert ranged_server.sent["/big.svm"] <= piece.stop - piece.start + longest + TAIL_BYTES
    features, labels, _ = read_all(spec, [], partition_bytes=5000, data_settings=allowed)
    local = spec_for({"uri": (files / "big.svm").as_uri()})
    assert_same((features, labels, None), full_parse(local, [files]))
    assert size > 20 * 5000 / 2


def test_http_npy_rows_are_ranged_reads(ranged_server, files, tmp_path):
    allowed = settings_for(tmp_path, f"127.0.0.1:{ranged_server.port}")
    spec = spec_for({"uri": ranged_server.url("x.npy")}, {"uri": ranged_server.url("y.npy")})
    plan = plan_partitions(spec, [], 10, 1, allowed)
    ranged_server.sent.clear()
    chunk = read_chunk(plan, 2, allowed)
    assert ranged_server.sent == {"/x.npy": 10 * 5 * 8}
    np.testing.assert_array_equal(chunk.features.toarray(), np.load(files / "x.npy")[20:30])
