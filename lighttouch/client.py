"""Clients of a running LightTouch service: :class:`Client` (blocking) and :class:`AsyncClient`
(asyncio), with the same names and methods.

Both speak the protocol of :mod:`service.client` (the one the ``lighttouch submit`` command
uses): the requests, the problem+json errors (:class:`RemoteProblem`: ``type``, ``title``,
``status``, ``detail`` and the JSON path of each bad field in ``issues``) and the event
stream that resumes with ``Last-Event-ID``. Arrays in a spec travel as ``data:`` URIs
(:mod:`lighttouch.arrays`). The URL and key default to ``LIGHTTOUCH_URL`` and
``LIGHTTOUCH_API_KEY``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import ServerSentEvent

from lighttouch.arrays import encode_arrays
from service import client as protocol
from service.errors import RemoteProblem, ServiceUnreachable
from service.progress import progress_bar
from service.settings import client_settings
from worker.errors import LightTouchError
from worker.result import Result

__all__ = ["AsyncClient", "AsyncJob", "Client", "Event", "Job", "JobFailed", "RemoteProblem",
           "ServiceUnreachable"]


class JobFailed(LightTouchError):
    """The job ended without a result (``failed`` or ``cancelled``); ``status`` is its final
    status document (``error`` says why)."""

    def __init__(self, status: dict[str, Any]):
        super().__init__(f"job {status['id']} {status['status']}: {status.get('error') or ''}")
        self.status = status


@dataclass(frozen=True)
class Event:
    """One event of a job's stream: its id (resume after it with ``Last-Event-ID``), name
    (``status``, ``progress``, ``result``) and decoded JSON data."""

    id: str | None
    name: str
    data: dict[str, Any]

    @classmethod
    def of(cls, event: ServerSentEvent) -> Event:
        """The event of a server-sent event."""
        return cls(event.id or None, event.event, json.loads(event.data))


def _spec_bytes(spec: Any) -> bytes:
    """The JSON body of a spec (a dict, arrays in it as data: URIs, or JSON text)."""
    if isinstance(spec, bytes | str):
        return spec.encode() if isinstance(spec, str) else spec
    return json.dumps(encode_arrays(spec), allow_nan=False).encode()


def _address(url: str | None, api_key: str | None) -> tuple[str, str | None]:
    """The URL and key given, else ``LIGHTTOUCH_URL`` and ``LIGHTTOUCH_API_KEY``."""
    if url is not None and api_key is not None:
        return url, api_key
    defaults = client_settings()
    key = defaults.api_key.get_secret_value() if defaults.api_key is not None else None
    return url or defaults.url, api_key if api_key is not None else key


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


def _finished(status: dict[str, Any]) -> dict[str, Any]:
    """``status`` if the job succeeded, else :class:`JobFailed`."""
    if status["status"] != "succeeded":
        raise JobFailed(status)
    return status


class _Connection:
    """The address of a service and a lazily opened HTTP client of it; pickles (and
    deep-copies, as scikit-learn's ``clone`` does) as its address alone."""

    def __init__(self, url: str | None = None, api_key: str | None = None):
        self.url, self.api_key = _address(url, api_key)
        self._http: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self.url, "api_key": self.api_key, "_http": None}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class Client(_Connection):
    """A blocking client of the service at ``url``; use it as a context manager or
    :meth:`close` it."""

    @property
    def http(self) -> httpx.Client:
        """The underlying HTTP client (opened on first use)."""
        if self._http is None:
            self._http = protocol.connect(self.url, self.api_key)
        return self._http

    def _send(self, call: protocol.Call) -> httpx.Response:
        with protocol.reporting_unreachable(self.url):
            return call.send(self.http)

    def submit(self, spec: Any, idempotency_key: str | None = None) -> Job:
        """Queue ``spec`` (arrays in it are sent as data: URIs); a repeated
        ``idempotency_key`` returns the first submission's job."""
        answer = self._send(protocol.submit_call(_spec_bytes(spec), idempotency_key)).json()
        return Job(self, answer["id"])

    def validate(self, spec: Any) -> dict[str, Any]:
        """The service's dry run: sizes, algorithm, memory estimate (RemoteProblem if invalid)."""
        return self._send(protocol.validate_call(_spec_bytes(spec))).json()

    def job(self, job_id: str) -> Job:
        """The job ``job_id`` of this API key."""
        return Job(self, job_id)

    def jobs(self, status: str | None = None, algorithm: str | None = None,
             limit: int = 20) -> list[dict[str, Any]]:
        """The newest ``limit`` (at most 100) jobs' status documents, filtered."""
        return self._send(protocol.list_call(status, algorithm, 0, limit)).json()["jobs"]

    def close(self) -> None:
        """Close the connection (it reopens on the next call)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Job:
    """A job of a :class:`Client`."""

    def __init__(self, client: Client, job_id: str):
        self.client, self.id = client, job_id

    def __repr__(self) -> str:
        return f"Job({self.id!r})"

    def status(self) -> dict[str, Any]:
        """Status, timestamps, figures (the latest progress; once succeeded, the Result's
        ``summary``) and error."""
        return self.client._send(protocol.job_call(self.id)).json()

    def events(self, last_event_id: str | None = None, timeout: float | None = None
               ) -> Iterator[Event]:
        """The job's events until its last, resuming after a dropped connection; TimeoutError
        when it has not ended within ``timeout`` seconds."""
        with protocol.reporting_unreachable(self.client.url):
            for event in protocol.events(self.client.http, self.id, last_event_id,
                                         _deadline(timeout)):
                yield Event.of(event)

    def wait(self, timeout: float | None = None, progress: bool = True) -> dict[str, Any]:
        """Follow the job to its end with a progress bar (a terminal's or Jupyter's); its
        final status document. JobFailed if it failed or was cancelled."""
        with progress_bar(not progress) as bar:
            for event in self.events(timeout=timeout):
                bar.event(event.name, event.data)
        return _finished(self.status())

    def result(self) -> Result:
        """The Result of the succeeded job (RemoteProblem 409 while it runs)."""
        return Result.model_validate_json(
            self.client._send(protocol.job_call(self.id, part="/result")).content)

    def cancel(self) -> dict[str, Any]:
        """Cancel the job (a running one is stopped); its status document."""
        return self.client._send(protocol.job_call(self.id, "DELETE")).json()


class AsyncClient(_Connection):
    """:class:`Client` for asyncio: the same methods, awaited."""

    @property
    def http(self) -> httpx.AsyncClient:
        """The underlying HTTP client (opened on first use)."""
        if self._http is None:
            self._http = protocol.connect_async(self.url, self.api_key)
        return self._http

    async def _send(self, call: protocol.Call) -> httpx.Response:
        with protocol.reporting_unreachable(self.url):
            return await call.send_async(self.http)

    async def submit(self, spec: Any, idempotency_key: str | None = None) -> AsyncJob:
        """:meth:`Client.submit`."""
        answer = (await self._send(protocol.submit_call(_spec_bytes(spec),
                                                        idempotency_key))).json()
        return AsyncJob(self, answer["id"])

    async def validate(self, spec: Any) -> dict[str, Any]:
        """:meth:`Client.validate`."""
        return (await self._send(protocol.validate_call(_spec_bytes(spec)))).json()

    def job(self, job_id: str) -> AsyncJob:
        """:meth:`Client.job`."""
        return AsyncJob(self, job_id)

    async def jobs(self, status: str | None = None, algorithm: str | None = None,
                   limit: int = 20) -> list[dict[str, Any]]:
        """:meth:`Client.jobs`."""
        return (await self._send(protocol.list_call(status, algorithm, 0, limit))).json()["jobs"]

    async def close(self) -> None:
        """Close the connection (it reopens on the next call)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncJob:
    """A job of an :class:`AsyncClient` (:class:`Job`'s methods, awaited)."""

    def __init__(self, client: AsyncClient, job_id: str):
        self.client, self.id = client, job_id

    def __repr__(self) -> str:
        return f"AsyncJob({self.id!r})"

    async def status(self) -> dict[str, Any]:
        """:meth:`Job.status`."""
        return (await self.client._send(protocol.job_call(self.id))).json()

    async def events(self, last_event_id: str | None = None, timeout: float | None = None
                     ) -> AsyncIterator[Event]:
        """:meth:`Job.events`, iterated with ``async for``."""
        with protocol.reporting_unreachable(self.client.url):
            async for event in protocol.events_async(self.client.http, self.id,
                                                     last_event_id, _deadline(timeout)):
                yield Event.of(event)

    async def wait(self, timeout: float | None = None, progress: bool = True
                   ) -> dict[str, Any]:
        """:meth:`Job.wait`."""
        with progress_bar(not progress) as bar:
            async for event in self.events(timeout=timeout):
                bar.event(event.name, event.data)
        return _finished(await self.status())

    async def result(self) -> Result:
        """:meth:`Job.result`."""
        response = await self.client._send(protocol.job_call(self.id, part="/result"))
        return Result.model_validate_json(response.content)

    async def cancel(self) -> dict[str, Any]:
        """:meth:`Job.cancel`."""
        return (await self.client._send(protocol.job_call(self.id, "DELETE"))).json()

