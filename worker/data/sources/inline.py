"""``data:`` URIs (RFC 2397): the bytes travel inside the spec, base64 or percent-encoded."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote_to_bytes

from worker.data.refs import parse_data_uri
from worker.data.sources.wording import too_large
from worker.errors import DataError
from worker.settings import DataSettings


def decode_data_uri(uri: str, path: str) -> bytes:
    """The payload of the ``data:`` URI ``uri``; DataError naming ``path`` and the fix when it
    does not decode. Run where a job is submitted too, so a malformed URI is refused there."""
    try:
        parts = parse_data_uri(uri)
        raw = unquote_to_bytes(parts.payload)
        return base64.b64decode(b"".join(raw.split()), validate=True) if parts.base64 else raw
    except ValueError as exc:
        raise DataError(path, f"cannot decode the data: URI ({exc}); write "
                              f"data:[<media type>][;base64],<payload> with a standard "
                              f"base64 or percent-encoded payload") from exc


class InlineSource:
    """The decoded payload of a ``data:`` URI; never cached (it is in the spec already)."""

    def __init__(self, uri: str, path: str, roots: Sequence[Path], settings: DataSettings):
        self._payload = decode_data_uri(uri, path)
        if len(self._payload) > settings.max_data_bytes:
            raise DataError(path, too_large(uri, len(self._payload), settings.max_data_bytes))

    def validator(self) -> None:
        """Inline bytes are not cached."""
        return None

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """The payload as an in-memory stream."""
        yield io.BytesIO(self._payload)

    #: The payload is in memory already.
    open_ranges = open
