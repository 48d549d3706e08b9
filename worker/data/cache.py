"""A bounded on-disk cache of parsed data, so repeated jobs on the same data skip the work.

An entry is keyed by the SHA-256 of (URI, validator, reference options): the validator names
the content's version (size+mtime+inode of a file, ETag or Last-Modified of an http(s)
resource, ETag of an S3 object), so a changed source is a different key. An entry is a
directory of ``.npy`` files (dense ``values``, or CSR ``data``/``indices``/``indptr``/
``shape``, and ``labels``), written under a temporary name and renamed into place, so readers
never see half an entry. Reading an entry refreshes its modification time; when the total
size passes the cap the least recently used entries are removed. The total is a scan of
every entry, so a process keeps its own tally (its last scan plus what it stored since) and
scans again only when the tally passes the cap or is :data:`RESCAN_S` old: a job's new files
cost no scan each (a scan can take longer than a small job's solve; measured:
docs/benchmarks.md#fixed-costs-measured), and the cap holds up to what other processes
store within that time.

Entries are memory-mapped copy-on-write: a hit copies nothing (pages come from the page
cache as they are touched), the arrays are ordinary writable ndarrays, and a write changes
only this process's pages, never the entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from worker.data.formats import Parsed
from worker.data.refs import DataRef
from worker.settings import DataSettings

#: Bumped whenever the entry layout or the parsers' output changes.
CACHE_FORMAT = 1

#: Age after which a staging directory is taken as left behind by a crashed process.
STALE_STAGING_S = 3600.0

_CSR_PARTS = ("data", "indices", "indptr", "shape")

#: Seconds a process trusts its tally of the cache's size before scanning it again.
RESCAN_S = 60.0

#: Cache directory -> (time.monotonic() of this process's last scan, bytes since then).
_TALLIES: dict[Path, tuple[float, int]] = {}


class ParsedCache:
    """Parsed arrays under ``directory``, at most ``limit`` bytes in all."""

    def __init__(self, directory: Path, limit: int):
        self.directory = directory
        self.limit = limit

    @classmethod
    def from_settings(cls, settings: DataSettings) -> ParsedCache | None:
        """The cache the settings describe, or None when it is turned off."""
        if settings.data_cache_bytes == 0:
            return None
        return cls(settings.data_cache_dir, settings.data_cache_bytes)

    @staticmethod
    def key(uri: str, validator: str, ref: DataRef) -> str:
        """The entry name for this content version and these reader options."""
        options = ref.model_dump(mode="json", exclude={"uri"})
        text = json.dumps([CACHE_FORMAT, uri, validator, options], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> Parsed | None:
        """The parsed data stored under ``key``, or None (missing, evicted or unreadable)."""
        entry = self.directory / key
        try:   # a miss is one failed listdir (a glob stats the entry first)
            arrays = {name[:-4]: np.asarray(np.load(entry / name, mmap_mode="c"))
                      for name in os.listdir(entry) if name.endswith(".npy")}
            os.utime(entry)
        except (OSError, ValueError):
            return None
        if "values" in arrays:
            values = arrays["values"]
        elif set(_CSR_PARTS) <= arrays.keys():
            values = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                                   shape=tuple(arrays["shape"]))
            values.has_canonical_format = True  # stored only after sum_duplicates
        else:
            return None
        return Parsed(values, arrays.get("labels"))

    def put(self, key: str, parsed: Parsed) -> None:
        """Store canonical float64 data under ``key`` and evict down to the size cap."""
        arrays = _arrays(parsed)
        size = sum(array.nbytes for array in arrays.values())
        if size > self.limit:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=self.directory))
            for name, array in arrays.items():
                np.save(staging / f"{name}.npy", array, allow_pickle=False)
            try:
                staging.rename(self.directory / key)
            except OSError:  # another process stored the same entry first
                shutil.rmtree(staging, ignore_errors=True)
            self._tally(size)
        except OSError:
            return  # a cache that cannot be written only costs time

    def _tally(self, size: int) -> None:
        """Count ``size`` new bytes; scan and evict when the tally passes the cap or is old."""
        scanned, total = _TALLIES.get(self.directory, (-np.inf, 0))
        total += size
        if total > self.limit or time.monotonic() - scanned > RESCAN_S:
            total, scanned = self._evict(), time.monotonic()
        _TALLIES[self.directory] = (scanned, total)

    def _evict(self) -> int:
        """Remove least recently used entries until the total is within the cap; the total
        left."""
        entries = []
        for entry in self.directory.iterdir():
            try:
                if entry.name.startswith("."):  # staging; left behind only by a crash
                    if time.time() - entry.stat().st_mtime > STALE_STAGING_S:
                        shutil.rmtree(entry, ignore_errors=True)
                    continue
                size = sum(file.stat().st_size for file in entry.iterdir())
                entries.append((entry.stat().st_mtime_ns, size, entry))
            except OSError:
                continue
        total = sum(size for _, size, _ in entries)
        for _, size, entry in sorted(entries):
            if total <= self.limit:
                break
            shutil.rmtree(entry, ignore_errors=True)
            total -= size
        return total


def _arrays(parsed: Parsed) -> dict[str, np.ndarray]:
    """The named arrays of an entry."""
    values = parsed.values
    if sp.issparse(values):
        arrays = {"data": values.data, "indices": values.indices, "indptr": values.indptr,
                  "shape": np.array(values.shape, dtype=np.int64)}
    else:
        arrays = {"values": values}
    if parsed.labels is not None:
        arrays["labels"] = parsed.labels
    return arrays
