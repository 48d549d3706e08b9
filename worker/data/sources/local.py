"""``file://`` URIs: a regular file that resolves (symlinks too) inside a data root.

The path is checked before anything is opened: no host, query or fragment, absolute, no NUL,
no ``..`` segment, and the fully resolved path inside one of the roots. The file opened must
be the file checked (same device and inode), so a symlink swapped in between is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

from worker.data.sources.wording import brief, too_large
from worker.errors import DataError
from worker.settings import DataSettings


class LocalFile:
    """A file under the data roots; its validator is its size, mtime and inode."""

    def __init__(self, uri: str, path: str, roots: Sequence[Path], settings: DataSettings):
        self._uri, self._path = uri, path
        self._file = _checked_path(uri, path, roots)
        try:
            self._stat = self._file.stat()
        except OSError as exc:
            raise DataError(path, f"cannot open {brief(uri)}: {exc.strerror}") from exc
        if self._stat.st_size > settings.max_data_bytes:
            raise DataError(path, too_large(uri, self._stat.st_size, settings.max_data_bytes))

    def validator(self) -> str:
        """Size, modification time and inode: they change when the file is rewritten."""
        stat = self._stat
        return f"file:{stat.st_dev}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """The file, refused when it is no longer the file that was checked."""
        try:
            stream = open(self._file, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise DataError(self._path, f"cannot open {brief(self._uri)}: "
                                        f"{exc.strerror}") from exc
        with stream:
            opened = os.fstat(stream.fileno())
            if (opened.st_dev, opened.st_ino) != (self._stat.st_dev, self._stat.st_ino):
                raise DataError(self._path, f"{brief(self._uri)} changed while it was being "
                                            f"opened; try again")
            yield stream

    #: A local file is read in place, so reading a range reads only that range.
    open_ranges = open


def _checked_path(uri: str, path: str, roots: Sequence[Path]) -> Path:
    """The resolved file an absolute ``file://`` URI names, inside one of ``roots``."""
    resolved = allowed_path(uri, path, roots)
    if not resolved.is_file():
        raise DataError(path, f"{brief(uri)} is not an existing regular file under the "
                              f"data roots; check the path")
    return resolved


def allowed_path(uri: str, path: str, roots: Sequence[Path]) -> Path:
    """The resolved path an absolute ``file://`` URI names, inside one of ``roots``; whether
    a file is there is not checked (the API judges URIs without the data mounted)."""
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise DataError(path, f"malformed URI {brief(uri)}: {exc}") from exc
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise DataError(path, f"{brief(uri)} names a host, query or fragment; write "
                              f"file:///absolute/path/to/data.npy")
    target = unquote(parts.path)
    if not target.startswith("/"):
        raise DataError(path, f"{brief(uri)} does not hold an absolute path; write "
                              f"file:///absolute/path/to/data.npy")
    if "\0" in target:
        raise DataError(path, f"{brief(uri)} contains a NUL character, which is refused")
    if ".." in target.split("/"):
        raise DataError(path, f"{brief(uri)} contains a '..' segment, which is refused; name "
                              f"the file by its plain absolute path under a data root")
    try:
        resolved = Path(target).resolve()
        allowed = [Path(root).resolve() for root in roots]
    except (OSError, RuntimeError) as exc:  # e.g. a symlink loop
        raise DataError(path, f"cannot resolve {brief(uri)}: {exc}") from exc
    if not any(resolved.is_relative_to(root) for root in allowed):
        raise DataError(path, f"{brief(uri)} is outside the data roots "
                              f"({', '.join(map(str, allowed)) or 'none configured'}); move "
                              f"the file under a data root or add its directory to "
                              f"LIGHTTOUCH_DATA_ROOTS")
    return resolved
