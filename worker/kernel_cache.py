"""numba's on-disk cache keyed by the kernels' sources, so that it cannot go stale.

numba checks a cached kernel against its own source file only. A kernel that inlines one of
another module (``_loss`` of :mod:`worker.kernels.objective` is inlined into the kernels of
:mod:`worker.kernels.iteration`, :mod:`worker.kernels.network` and others, and the losses'
``value`` and ``slope`` into ``_loss``) keeps the old code after an edit of the inlined one,
and a new loss code then fails inside it as ``unknown loss code``. Here the cache directory
is named by a digest of every source file of the packages that hold kernels
(:data:`KERNEL_PACKAGES`; a test checks no other module compiles one): an edit of any of them
starts a new cache, compiled afresh, and the old one is never read.

The base is ``NUMBA_CACHE_DIR`` when it is set (the image's, filled at build by
``python -m worker.queue.warm_up``), else ``$XDG_CACHE_HOME/lighttouch/numba`` (or
``~/.cache/lighttouch/numba``). :func:`use_keyed_cache` runs when :mod:`worker` is imported,
before any kernel is decorated.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

#: worker's packages whose modules compile kernels (``njit``, ``worker.kernels.jit.kernel``).
KERNEL_PACKAGES = ("kernels", "losses")
#: The worker package's directory.
WORKER = Path(__file__).resolve().parent


def sources_digest(root: Path = WORKER) -> str:
    """16 hex digits of the SHA-256 of every ``*.py`` of :data:`KERNEL_PACKAGES` under
    ``root`` (their paths and contents, in sorted order)."""
    digest = hashlib.sha256()
    for package in KERNEL_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_base() -> Path:
    """``NUMBA_CACHE_DIR``, else the user's cache directory's ``lighttouch/numba``."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(home) / "lighttouch" / "numba"


def use_keyed_cache() -> Path:
    """Point numba's cache at ``<base>/kernels-<digest>`` (module docstring); return it."""
    path = cache_base() / f"kernels-{sources_digest()}"
    numba.config.CACHE_DIR = str(path)
    return path
