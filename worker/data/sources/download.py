"""A temporary file that remote bytes are copied into, refusing to grow past the byte cap."""

from __future__ import annotations

import tempfile
from typing import BinaryIO

from worker.data.sources.wording import too_large
from worker.errors import DataError


class CappedFile:
    """Write-only view of an anonymous temporary file holding at most ``limit`` bytes.

    It has ``read``, ``tell`` and ``close`` so that fsspec treats it as a file object to
    download into; ``file`` is the temporary file itself, to read once complete.
    """

    def __init__(self, uri: str, path: str, limit: int):
        self._uri, self._path, self._limit = uri, path, limit
        self.file: BinaryIO = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the owner
        self.size = 0

    def write(self, chunk: bytes) -> int:
        """Append ``chunk``; DataError once the total passes the limit."""
        self.size += len(chunk)
        if self.size > self._limit:
            raise DataError(self._path, too_large(self._uri, None, self._limit))
        return self.file.write(chunk)

    def read(self, size: int = -1) -> bytes:
        """Nothing: the file is read through ``file`` once complete."""
        return b""

    def tell(self) -> int:
        """Bytes written so far."""
        return self.size

    def close(self) -> None:
        """Close the temporary file (it is deleted)."""
        self.file.close()

    def copy_from(self, stream: BinaryIO, chunk_bytes: int = 2**22) -> None:
        """Copy a whole stream in, chunk by chunk."""
        while chunk := stream.read(chunk_bytes):
            self.write(chunk)

    def rewound(self) -> BinaryIO:
        """The complete temporary file, positioned at its start."""
        self.file.flush()
        self.file.seek(0)
        return self.file
