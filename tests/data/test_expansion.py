"""A data file that would expand past the per-job memory budget is refused from its headers,
footer or a counting pass, naming the field, the bytes and LIGHTTOUCH_MAX_JOB_BYTES, while
this process's peak memory stays far below what the file stands for."""

from __future__ import annotations

import resource
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bench import hostile_files
from tests.data.helpers import PATH, data_uri, isolated_data_cache, matrix
from worker.errors import DataError

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

BUDGET = 2**20
#: Values of a file that expands to 2 MiB, twice the budget.
VALUES = 2**18
OVER_BUDGET = (rf"^{PATH}: .* expands to [\d,]+ bytes once read .*, over the per-job memory "
               rf"budget of 1,048,576 bytes .* raise LIGHTTOUCH_MAX_JOB_BYTES$")


@pytest.fixture(autouse=True)
def small_budget(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))


def read_file(tmp_path: Path, name: str, payload: bytes, **options) -> object:
    target = tmp_path / name
    target.write_bytes(payload)
    return matrix({"uri": target.as_uri(), **options}, roots=[tmp_path])


def peak_rss() -> int:
    """This process's peak resident memory, bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@pytest.mark.parametrize(("name", "payload", "options"), [
    ("bomb.npz", hostile_files.npz_bomb(VALUES), {}),
    ("bomb.npz", hostile_files.npz_bomb(VALUES, name="w.npy"), {"key": "w"}),
    ("int8.npy", hostile_files.npy_claiming((VALUES // 2, 1), "|i1", VALUES // 2), {}),
    ("bomb.parquet", hostile_files.parquet_bomb(VALUES // 2), {}),
    ("bomb.feather", hostile_files.feather_bomb(VALUES // 2), {}),
    ("rows.svm", hostile_files.svmlight_lines(VALUES // 2), {}),
    ("rows.csv", b"1,2,3,4\n" * (VALUES // 8), {"header": False}),
    ("claim.mtx", hostile_files.mtx_claiming(2**14, 2**14, None), {}),
])
def test_data_over_the_budget_is_refused_naming_the_field(tmp_path, name, payload, options):
    assert len(payload) < 8 * VALUES
    with pytest.raises(DataError, match=OVER_BUDGET):
        read_file(tmp_path, name, payload, **options)


def test_an_npz_bomb_in_a_data_uri_is_refused_before_it_is_decompressed():
    """1 GiB of zeros in a 1 MiB data: URI, against the default budget of half the machine
    raised to 512 MiB: refused, and the process never holds the gigabyte."""
    payload = hostile_files.npz_bomb(2**27)
    assert len(payload) < 2**21
    before = peak_rss()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(2**29))
        with pytest.raises(DataError, match=r"the npz archive expands to 1,073,741,824 "
                                            r"bytes once read"):
            matrix({"uri": data_uri(payload, "application/x-npz")})
    assert peak_rss() - before < 2**27


def test_an_npz_whose_zip_directory_lies_about_its_size_is_refused():
    """The directory says 1 KiB: the member is never decompressed past it (zipfile stops at
    the stated size, and the checksum then fails)."""
    payload = hostile_files.npz_lying_directory(VALUES)
    with pytest.raises(DataError, match=r"^objective.data.features: cannot read the data: URI "
                                        r"as npz: Bad CRC-32 for file 'x.npy'"):
        matrix({"uri": data_uri(payload, "application/x-npz")})


def test_an_npz_member_compressed_without_a_bound_per_read_is_refused():
    payload = hostile_files.npz_bomb(16, method=zipfile.ZIP_BZIP2)
    with pytest.raises(DataError, match=r"npz member 'x.npy' is compressed with zip method 12; "
                                        r"write the archive with numpy.savez"):
        matrix({"uri": data_uri(payload, "application/x-npz")})


@pytest.mark.parametrize(("payload", "message"), [
    (hostile_files.sparse_npz_shape((2**40, 4)), r"the sparse npz matrix declares shape "
                                                 r"\(1099511627776, 4\): axis 0"),
    (hostile_files.mtx_claiming(4, 2**31, 1), r"the Matrix Market header declares shape "
                                              r"\(4, 2147483648\): axis 1"),
    (hostile_files.mtx_claiming(4, 4, 10**9), r"claims 1,000,000,000 entries but the file "
                                              r"holds 67 bytes"),
])
def test_a_declared_shape_past_the_largest_dimension_is_refused(payload, message):
    media = "application/x-npz" if payload.startswith(b"PK") else "text/x-matrix-market"
    with pytest.raises(DataError, match=message):
        matrix({"uri": data_uri(payload, media)})


def test_pickled_arrays_stay_refused():
    for payload, media in ((hostile_files.npy_pickled(), "application/x-npy"),
                           (hostile_files.pickle_bytes(), "application/x-npy")):
        with pytest.raises(DataError, match=rf"^{PATH}: "):
            matrix({"uri": data_uri(payload, media)})


def test_data_within_the_budget_still_read(tmp_path):
    values = np.arange(1000.0).reshape(100, 10)
    np.save(tmp_path / "ok.npy", values)
    np.testing.assert_array_equal(matrix({"uri": (tmp_path / "ok.npy").as_uri()},
                                         roots=[tmp_path]), values)
