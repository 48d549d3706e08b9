"""numba's cache is keyed by the kernels' sources (:mod:`worker.kernel_cache`): an edit of any
kernel source names a new cache, every kernel is cached there, and no module outside the
digested packages compiles a kernel."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numba

from worker.kernel_cache import KERNEL_PACKAGES, WORKER, sources_digest, use_keyed_cache
from worker.kernels.objective import loss_value
from worker.losses import hinge

#: A decorator that compiles a numba kernel.
COMPILES = re.compile(r"^\s*@(?:numba\.)?(?:njit|jit|kernel|vectorize|guvectorize)\b", re.M)


def test_an_edit_of_an_inlined_kernel_names_a_new_cache(tmp_path: Path):
    for package in KERNEL_PACKAGES:
        shutil.copytree(WORKER / package, tmp_path / package)
    assert sources_digest(tmp_path) == sources_digest()
    edited = tmp_path / "kernels" / "objective.py"
    edited.write_text(edited.read_text().replace("unknown loss code", "unknown loss"))
    assert sources_digest(tmp_path) != sources_digest()


def test_every_kernel_is_cached_under_the_digest():
    path = use_keyed_cache()
    assert numba.config.CACHE_DIR == str(path) and path.name == f"kernels-{sources_digest()}"
    for dispatcher in (loss_value, hinge.value):
        assert Path(dispatcher._cache._cache_path).is_relative_to(path)


def test_only_the_digested_packages_compile_kernels():
    compiling = {path.relative_to(WORKER).parts[0] for path in WORKER.rglob("*.py")
                 if COMPILES.search(path.read_text(encoding="utf-8"))}
    assert compiling == set(KERNEL_PACKAGES)
