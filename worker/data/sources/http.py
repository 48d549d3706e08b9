"""``http(s)://`` URIs through fsspec's HTTPFileSystem, on a session that enforces the policy.

fsspec owns the requests (``info`` for the validator and size, ``get_file`` for the bytes,
``open`` with no cache for byte ranges, which a server must answer with 206 Partial Content);
the aiohttp session it is given (through its ``get_client`` hook) is ours:

- its connector resolves names with :class:`~worker.data.sources.address_policy.CheckingResolver`,
  so it connects only to addresses that were checked, every time it connects;
- a redirect hook checks every ``Location`` with
  :func:`~worker.data.sources.address_policy.check_url` before aiohttp follows it (IP literals
  skip the resolver, and https may not be downgraded to http), at most
  :data:`MAX_REDIRECTS` times;
- proxies and credentials from the environment are ignored (``trust_env=False``), and every
  request has ``LIGHTTOUCH_FETCH_TIMEOUT_S`` in total.

The URL itself is checked before any session exists, so a refused host is never contacted.
Bytes go to a :class:`~worker.data.sources.download.CappedFile` that stops at the byte cap.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urljoin, urlsplit

import aiohttp
from fsspec.asyn import sync
from fsspec.implementations.http import HTTPFileSystem

from worker.data.sources.address_policy import CheckingResolver, RefusedAddress, check_url
from worker.data.sources.download import CappedFile
from worker.data.sources.wording import brief, too_large
from worker.errors import DataError
from worker.settings import DataSettings

#: Redirects followed for one request.
MAX_REDIRECTS = 5

#: Longest wait for a TCP (and TLS) connection, within the total time limit.
CONNECT_TIMEOUT_S = 15.0


class HttpSource:
    """An http(s) resource on an allowed host; validator from its ETag or Last-Modified."""

    def __init__(self, uri: str, path: str, roots: Sequence[Path], settings: DataSettings):
        self._uri, self._path, self._settings = uri, path, settings
        try:
            check_url(uri, settings.uri_allow_hosts)
        except RefusedAddress as exc:
            raise DataError(path, f"{brief(uri)} is refused: {exc}") from None

    def validator(self) -> str | None:
        """``ETag`` (else ``Last-Modified``) and size; None when the server sends neither."""
        with self._filesystem() as filesystem:
            info = self._call(filesystem.info, self._uri)
        size = info.get("size")
        if size is not None and size > self._settings.max_data_bytes:
            raise DataError(self._path, too_large(self._uri, size,
                                                  self._settings.max_data_bytes))
        tag = info.get("ETag") or info.get("Last-Modified")
        return None if tag is None else f"http:{tag}:{size}"

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """Download into a temporary file (deleted afterwards) and yield it."""
        target = CappedFile(self._uri, self._path, self._settings.max_data_bytes)
        try:
            with self._filesystem() as filesystem:
                self._call(filesystem.get_file, self._uri, target)
            yield target.rewound()
        finally:
            target.close()

    @contextmanager
    def open_ranges(self) -> Iterator[BinaryIO]:
        """A stream whose every read is one ``Range`` request for exactly those bytes."""
        size = self.size()
        with self._filesystem() as filesystem:
            remote = self._call(lambda: filesystem.open(self._uri, "rb", size=size,
                                                        cache_type="none"))
            yield _RangedReads(remote, self._call)

    def size(self) -> int:
        """The content's length (``Content-Length``), within the byte cap."""
        with self._filesystem() as filesystem:
            size = self._call(filesystem.info, self._uri).get("size")
        if size is None:
            raise DataError(self._path, f"{brief(self._uri)}: the server does not say how "
                                        f"long the content is, so it cannot be read in ranges")
        if size > self._settings.max_data_bytes:
            raise DataError(self._path, too_large(self._uri, size,
                                                  self._settings.max_data_bytes))
        return int(size)

    @contextmanager
    def _filesystem(self) -> Iterator[HTTPFileSystem]:
        """An HTTPFileSystem on a policy-enforcing session, closed afterwards."""
        filesystem = HTTPFileSystem(get_client=_session_factory(self._settings),
                                    skip_instance_cache=True, max_redirects=MAX_REDIRECTS)
        session = sync(filesystem.loop, filesystem.set_session)
        try:
            yield filesystem
        finally:
            sync(filesystem.loop, session.close)

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run an fsspec call, turning whatever it raises into a DataError that says why."""
        try:
            return function(*args)
        except DataError:
            raise
        except Exception as exc:  # fsspec wraps failures in FileNotFoundError; find the cause
            raise DataError(self._path, f"{brief(self._uri)}: {self._explain(exc)}") from exc

    def _explain(self, exc: BaseException) -> str:
        """The most specific reason in an exception chain, in words."""
        chain = _chain(exc)
        for error in chain:
            if isinstance(error, RefusedAddress):
                return f"refused: {error}"
            if isinstance(error, aiohttp.TooManyRedirects):
                return f"more than {MAX_REDIRECTS} redirects; give the final URL"
            if isinstance(error, aiohttp.ClientResponseError):
                return (f"the server answered HTTP {error.status} {error.message}"
                        + ("; check the URL" if error.status == 404 else ""))
            if isinstance(error, TimeoutError):
                return (f"no complete answer within {self._settings.fetch_timeout_s:g} s "
                        f"(LIGHTTOUCH_FETCH_TIMEOUT_S)")
            if isinstance(error, aiohttp.ClientConnectorError):
                return f"cannot reach host {error.host} port {error.port}: {error.strerror}"
        if isinstance(chain[-1], FileNotFoundError):
            return "not found (HTTP 404); check the URL"
        return f"the transfer failed: {chain[-1]}"


class _RangedReads(io.RawIOBase):
    """A read-only seekable view of an fsspec file whose failures become DataErrors."""

    def __init__(self, remote: Any, call: Callable[..., Any]):
        super().__init__()
        self._remote, self._call = remote, call

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._remote.seek(offset, whence)

    def tell(self) -> int:
        return self._remote.tell()

    def read(self, size: int = -1) -> bytes:
        return self._call(self._remote.read, size)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes, outermost first."""
    chain = [exc]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) is not None \
            and cause not in chain:
        chain.append(cause)
    return chain


def _session_factory(settings: DataSettings) -> Callable[..., Any]:
    """fsspec's ``get_client`` hook: an aiohttp session that enforces the address policy."""
    async def make_session(**_fsspec_options: Any) -> aiohttp.ClientSession:
        tracing = aiohttp.TraceConfig()
        tracing.on_request_redirect.append(_redirect_guard(settings.uri_allow_hosts))
        connector = aiohttp.TCPConnector(resolver=CheckingResolver(settings.uri_allow_hosts),
                                         use_dns_cache=False)
        timeout = aiohttp.ClientTimeout(total=settings.fetch_timeout_s,
                                        sock_connect=min(CONNECT_TIMEOUT_S,
                                                         settings.fetch_timeout_s))
        return aiohttp.ClientSession(connector=connector, timeout=timeout,
                                     trace_configs=[tracing], trust_env=False)
    return make_session


def _redirect_guard(allow_hosts: Sequence[str]) -> Callable[..., Any]:
    """A trace hook that checks a redirect's target before aiohttp follows it."""
    async def check_redirect(session: aiohttp.ClientSession, context: Any,
                             params: aiohttp.TraceRequestRedirectParams) -> None:
        location = params.response.headers.get("Location")
        if location is None:
            return
        target = urljoin(str(params.url), location)
        if params.url.scheme == "https" and urlsplit(target).scheme == "http":
            raise RefusedAddress(f"a redirect from https to http ({target[:120]}) is refused")
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, check_url, target, allow_hosts)
        except RefusedAddress as exc:
            raise RefusedAddress(f"redirect to {target[:120]}: {exc}") from None
    return check_redirect
