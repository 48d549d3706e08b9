"""``s3://bucket/key`` URIs through s3fs (the optional extra ``lighttouch[s3]``).

Endpoint, region and credentials come from the server settings only (``LIGHTTOUCH_S3_*``);
a URI carrying a query, fragment or user info is refused, and without configured credentials
access is anonymous: the AWS environment, profiles and instance metadata are never consulted.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from worker.data.sources.download import CappedFile
from worker.data.sources.wording import brief, too_large
from worker.errors import DataError
from worker.settings import DataSettings


class S3Source:
    """An object in a bucket; its validator is the ETag and size."""

    def __init__(self, uri: str, path: str, roots: Sequence[Path], settings: DataSettings):
        self._uri, self._path, self._settings = uri, path, settings
        parts = urlsplit(uri)
        if not parts.netloc or not parts.path.strip("/") or parts.query or parts.fragment \
                or "@" in parts.netloc:
            raise DataError(path, f"{brief(uri)} is not s3://bucket/key (no query, fragment "
                                  f"or credentials: the server's settings hold those)")
        if importlib.util.find_spec("s3fs") is None:
            raise DataError(path, f"{brief(uri)} needs S3 support, which this installation "
                                  f"lacks; install lighttouch[s3]")
        self._key = f"{parts.netloc}{parts.path}"
        self._info: dict[str, Any] | None = None

    def validator(self) -> str | None:
        """The object's ETag and size."""
        info = self._stat()
        tag = info.get("ETag")
        return None if tag is None else f"s3:{tag}:{info.get('size')}"

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """Download into a temporary file (deleted afterwards) and yield it."""
        self._stat()
        target = CappedFile(self._uri, self._path, self._settings.max_data_bytes)
        try:
            with self._guard(), self._filesystem().open(self._key, "rb") as remote:
                target.copy_from(remote)
            yield target.rewound()
        finally:
            target.close()

    @contextmanager
    def open_ranges(self) -> Iterator[BinaryIO]:
        """The object as a stream whose every read is one ranged GET for those bytes."""
        size = self._stat().get("size")
        with self._guard(), self._filesystem().open(self._key, "rb", size=size,
                                                     cache_type="none") as remote:
            yield remote

    def _stat(self) -> dict[str, Any]:
        """The object's metadata (once); DataError when it is missing or too large."""
        if self._info is None:
            with self._guard():
                self._info = self._filesystem().info(self._key)
        size = self._info.get("size")
        if size is not None and size > self._settings.max_data_bytes:
            raise DataError(self._path, too_large(self._uri, size,
                                                  self._settings.max_data_bytes))
        return self._info

    def _filesystem(self) -> Any:
        """An S3FileSystem configured from the settings alone."""
        import s3fs

        settings = self._settings
        secret = settings.s3_secret_access_key
        credentials = ({"key": settings.s3_access_key_id, "secret": secret.get_secret_value()}
                       if settings.s3_access_key_id and secret else {"anon": True})
        return s3fs.S3FileSystem(
            endpoint_url=settings.s3_endpoint_url, skip_instance_cache=True,
            client_kwargs={"region_name": settings.s3_region} if settings.s3_region else {},
            config_kwargs={"connect_timeout": settings.fetch_timeout_s,
                           "read_timeout": settings.fetch_timeout_s,
                           "retries": {"max_attempts": 2}},
            **credentials)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn s3fs failures into DataErrors that name the object."""
        try:
            yield
        except DataError:
            raise
        except FileNotFoundError as exc:
            raise DataError(self._path, f"{brief(self._uri)} does not exist (or this server "
                                        f"may not read it)") from exc
        except PermissionError as exc:
            raise DataError(self._path, f"{brief(self._uri)}: access denied; check the "
                                        f"server's S3 credentials") from exc
        except Exception as exc:  # botocore and aiohttp raise a wide range of errors
            raise DataError(self._path, f"{brief(self._uri)}: cannot fetch: {exc}") from exc
