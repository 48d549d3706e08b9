"""Where a reference's bytes come from: one :class:`Source` per URI scheme, policy checked.

:func:`open_source` checks the URI against the scheme's policy *before* anything is read
(data roots for ``file://``, the address policy for ``http(s)://``, server settings for
``s3://``) and returns a :class:`Source`. Its ``validator()`` names the current version of
the content (mtime, ETag, ...) so parsed data can be cached, and ``open()`` yields a seekable
binary stream of at most ``LIGHTTOUCH_MAX_DATA_BYTES``. Remote bytes go to a temporary file
first, so every reader sees a local, seekable stream. ``open_ranges()`` instead yields a
seekable stream that fetches only the bytes read from it (HTTP ``Range`` requests, S3 ranged
GETs), for readers of one partition (:mod:`worker.distributed.partitions`).

=============  ==========================  ================================================
scheme         module                      validator
=============  ==========================  ================================================
``data:``      :mod:`.inline`              none (the bytes travel in the spec)
``file://``    :mod:`.local`               size, mtime and inode of the resolved file
``http(s)``    :mod:`.http`                ETag, else Last-Modified, with the size
``s3://``      :mod:`.s3`                  ETag, with the size
=============  ==========================  ================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import BinaryIO, Protocol

from worker.data.refs import uri_scheme
from worker.data.sources.http import HttpSource
from worker.data.sources.inline import InlineSource, decode_data_uri
from worker.data.sources.local import LocalFile, allowed_path
from worker.data.sources.s3 import S3Source
from worker.data.sources.wording import brief
from worker.errors import DataError
from worker.settings import DataSettings


class Source(Protocol):
    """The bytes behind one URI, already checked against the policy of its scheme."""

    def validator(self) -> str | None:
        """A string that changes whenever the content does; None when no such thing exists."""

    def open(self) -> AbstractContextManager[BinaryIO]:
        """A seekable binary stream of the content, within the byte cap."""

    def open_ranges(self) -> AbstractContextManager[BinaryIO]:
        """A seekable binary stream that reads only the byte ranges asked for."""


SourceFactory = Callable[[str, str, Sequence[Path], DataSettings], Source]

#: URI scheme -> the source that reads it.
SCHEMES: dict[str, SourceFactory] = {"data": InlineSource, "file": LocalFile,
                                     "http": HttpSource, "https": HttpSource, "s3": S3Source}


def open_source(uri: str, path: str, roots: Sequence[Path], settings: DataSettings) -> Source:
    """The checked :class:`Source` of ``uri``; DataError when the scheme or policy refuses."""
    return SCHEMES[_known_scheme(uri, path)](uri, path, roots, settings)


def check_uri(uri: str, path: str, roots: Sequence[Path]) -> None:
    """What the policy can judge of ``uri`` without reading or fetching anything: a scheme
    LightTouch reads, for ``file://`` a well-formed path inside ``roots``, and for ``data:`` a
    payload that decodes. DataError if not. Run where a job is submitted, so such a reference
    is refused there."""
    scheme = _known_scheme(uri, path)
    if scheme == "file":
        allowed_path(uri, path, roots)
    elif scheme == "data":
        decode_data_uri(uri, path)


def _known_scheme(uri: str, path: str) -> str:
    """The scheme of ``uri``, one of :data:`SCHEMES`; DataError naming ``path`` if not."""
    scheme = uri_scheme(uri)
    if scheme not in SCHEMES:
        found = f"scheme {scheme}:" if scheme else "no scheme"
        raise DataError(path, f"{brief(uri)} has {found}, which is not supported; use "
                              f"{', '.join(s + ':' for s in SCHEMES)} (file:///absolute/path "
                              f"under a data root)")
    return scheme
