"""The parsed-data cache, load statistics, the byte cap on local files, and s3:// checks."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from tests.data.helpers import MATRIX, PATH, as_dense, data_uri, npy_bytes
from worker.data import cache as cache_module
from worker.data.cache import ParsedCache
from worker.data.formats import Parsed
from worker.data.read import LoadStats, read_matrix
from worker.errors import DataError
from worker.settings import DataSettings


def settings_for(tmp_path: Path, **changes) -> DataSettings:
    return DataSettings(data_cache_dir=tmp_path / "cache", **changes)


def load(uri: str, tmp_path: Path, settings: DataSettings, stats: LoadStats | None = None):
    return read_matrix(MATRIX.validate_python({"uri": uri}), PATH, roots=[tmp_path],
                       settings=settings, stats=stats)


def test_second_load_of_a_file_is_a_cache_hit(tmp_path):
    sp.save_npz(tmp_path / "x.npz", sp.random(50, 40, density=0.1, format="csr",
                                               random_state=0))
    uri, settings, stats = (tmp_path / "x.npz").as_uri(), settings_for(tmp_path), LoadStats()
    first = load(uri, tmp_path, settings, stats)
    second = load(uri, tmp_path, settings, stats)
    assert isinstance(second, sp.csr_matrix) and second.has_canonical_format
    np.testing.assert_array_equal(first.toarray(), second.toarray())
    assert stats.references == 2 and stats.cache_hits == 1
    assert stats.bytes_read == (tmp_path / "x.npz").stat().st_size
    assert set(stats.as_stats()) == {"data_references", "data_bytes", "data_load_s",
                                     "data_cache_hits"}


def test_a_rewritten_file_is_read_again(tmp_path):
    settings, stats = settings_for(tmp_path), LoadStats()
    target = tmp_path / "x.npy"
    np.save(target, np.ones((2, 2)))
    load(target.as_uri(), tmp_path, settings, stats)
    np.save(target, np.full((2, 2), 2.0))
    os.utime(target, ns=(10**18, 10**18))
    np.testing.assert_array_equal(load(target.as_uri(), tmp_path, settings, stats),
                                  np.full((2, 2), 2.0))
    assert stats.cache_hits == 0


def test_options_are_part_of_the_key(tmp_path):
    np.savez(tmp_path / "two.npz", a=np.ones((2, 2)), b=np.full((2, 2), 3.0))
    settings = settings_for(tmp_path)
    for key, value in (("a", 1.0), ("b", 3.0), ("a", 1.0)):
        ref = MATRIX.validate_python({"uri": (tmp_path / "two.npz").as_uri(), "key": key})
        np.testing.assert_array_equal(read_matrix(ref, PATH, roots=[tmp_path],
                                                  settings=settings), np.full((2, 2), value))


def test_cache_size_is_capped_least_recently_used_first(tmp_path):
    cache = ParsedCache(tmp_path / "cache", limit=3 * (8000 + 128) + 100)  # .npy header: 128
    for name in ("a", "b", "c"):
        cache.put(name, Parsed(np.zeros(1000)))
    assert cache.get("a") is not None  # refreshes a: b is now the oldest
    os.utime(tmp_path / "cache" / "b", ns=(1, 1))
    cache.put("d", Parsed(np.zeros(1000)))
    assert cache.get("b") is None
    assert all(cache.get(name) is not None for name in ("a", "c", "d"))
    cache.put("huge", Parsed(np.zeros(10_000)))  # larger than the cap: not stored
    assert cache.get("huge") is None


def test_unreadable_entries_are_misses(tmp_path):
    cache = ParsedCache(tmp_path, limit=10**6)
    cache.put("k", Parsed(np.ones(3), np.ones(3)))
    (tmp_path / "k" / "values.npy").write_bytes(b"garbage")
    assert cache.get("k") is None
    assert cache.get("absent") is None


def test_cache_off_and_inline_data_never_cached(tmp_path):
    np.save(tmp_path / "x.npy", np.eye(2))
    off = settings_for(tmp_path, data_cache_bytes=0)
    load((tmp_path / "x.npy").as_uri(), tmp_path, off)
    assert not (tmp_path / "cache").exists()
    stats = LoadStats()
    for _ in range(2):
        load(data_uri(npy_bytes(np.eye(2))), tmp_path, settings_for(tmp_path), stats)
    assert stats.cache_hits == 0 and not (tmp_path / "cache").exists()


def test_local_files_over_the_byte_cap_are_refused_unread(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(100))
    with pytest.raises(DataError, match=r"holds 928 bytes, over the limit of 500 bytes"):
        load((tmp_path / "x.npy").as_uri(), tmp_path, settings_for(tmp_path,
                                                                   max_data_bytes=500))
    with pytest.raises(DataError, match=r"the data: URI holds 928 bytes, over the limit"):
        load(data_uri(npy_bytes(np.zeros(100))), tmp_path,
             settings_for(tmp_path, max_data_bytes=500))


def test_settings_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGHTTOUCH_MAX_DATA_BYTES", "1000")
    monkeypatch.setenv("LIGHTTOUCH_DATA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_FETCH_TIMEOUT_S", "2.5")
    settings = DataSettings()
    assert (settings.max_data_bytes, settings.data_cache_dir, settings.fetch_timeout_s) == \
        (1000, tmp_path, 2.5)
    monkeypatch.setenv("LIGHTTOUCH_MAX_DATA_BYTES", "-1")
    with pytest.raises(ValueError, match="max_data_bytes"):
        DataSettings()


@pytest.mark.parametrize(("uri", "message"), [
    ("s3://bucket/key.npy?versionId=1", "is not s3://bucket/key"),
    ("s3://user:secret@bucket/key.npy", "is not s3://bucket/key"),
    ("s3://bucket", "is not s3://bucket/key"),
])
def test_s3_uris_carry_no_options_or_credentials(tmp_path, uri, message):
    with pytest.raises(DataError, match=message):
        read_matrix(MATRIX.validate_python({"uri": uri, "format": "npy"}), PATH, roots=[],
                    settings=settings_for(tmp_path))


def test_density_choice_survives_the_cache(tmp_path):
    np.save(tmp_path / "x.npy", np.eye(4))
    settings = settings_for(tmp_path)
    for _ in range(2):
        result = load((tmp_path / "x.npy").as_uri(), tmp_path, settings)
        assert isinstance(result, sp.csr_matrix)
        np.testing.assert_array_equal(as_dense(result), np.eye(4))


def test_a_process_scans_the_cache_again_only_past_the_cap_or_after_a_while(tmp_path,
                                                                             monkeypatch):
    cache = ParsedCache(tmp_path / "cache", limit=3 * (8000 + 128) + 100)
    cache.put("a", Parsed(np.zeros(1000)))                     # the first put scans
    for name in ("x", "y", "z"):                                # another process's entries
        (tmp_path / "cache" / name).mkdir()
        np.save(tmp_path / "cache" / name / "values.npy", np.zeros(1000))
    os.utime(tmp_path / "cache" / "x", ns=(1, 1))
    cache.put("b", Parsed(np.zeros(10)))                        # within this tally: no scan
    assert (tmp_path / "cache" / "x").exists()
    monkeypatch.setattr(cache_module, "RESCAN_S", 0.0)
    cache.put("c", Parsed(np.zeros(10)))                        # the tally is old: a scan
    assert not (tmp_path / "cache" / "x").exists() and cache.get("c") is not None
