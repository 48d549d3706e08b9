"""The client side of the HTTP API, shared by ``lighttouch submit`` and :mod:`lighttouch.client`
(blocking and asyncio): each request is a plain :class:`Call` that either kind of httpx
client sends, every answer is checked into :class:`RemoteProblem` (the problem+json fields),
and a job's event stream resumes with ``Last-Event-ID`` after a dropped connection
(:class:`Resumption` holds that state for both loops).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse, connect_sse

from service.errors import RemoteProblem, ServiceUnreachable
from worker.queue.state import is_terminal_event

#: Consecutive failed reconnections before an event stream gives up, and the longest pause.
MAX_RECONNECTS = 10
MAX_BACKOFF_S = 5.0
#: Seconds to connect, and to wait for the next bytes (event streams send keep-alives).
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0
JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Call:
    """One request of the API, sent by a blocking or an asyncio httpx client."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    content: bytes | None = None
    headers: dict[str, str] | None = None

    def send(self, http: httpx.Client) -> httpx.Response:
        """Send on a blocking client; the checked response."""
        return check(http.request(self.method, self.path, params=self.params,
                                  content=self.content, headers=self.headers))

    async def send_async(self, http: httpx.AsyncClient) -> httpx.Response:
        """Send on an asyncio client; the checked response."""
        return check(await http.request(self.method, self.path, params=self.params,
                                        content=self.content, headers=self.headers))


def submit_call(spec: bytes, idempotency_key: str | None = None) -> Call:
    """``POST /v1/jobs``: queue the spec (JSON bytes); a repeated key replays the answer."""
    key = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    return Call("POST", "/v1/jobs", content=spec, headers={**JSON, **key})


def validate_call(spec: bytes) -> Call:
    """``POST /v1/validate``: the dry run of a spec."""
    return Call("POST", "/v1/validate", content=spec, headers=JSON)


def job_call(job_id: str, method: str = "GET", part: str = "") -> Call:
    """A job's status (``GET``), cancellation (``DELETE``) or ``part`` (``/result``)."""
    return Call(method, f"/v1/jobs/{job_id}{part}")


def list_call(status: str | None, algorithm: str | None, offset: int, limit: int) -> Call:
    """``GET /v1/jobs``: one page of the tenant's jobs, newest first."""
    params = {"status": status, "algorithm": algorithm, "offset": offset, "limit": limit}
    return Call("GET", "/v1/jobs", params={k: v for k, v in params.items() if v is not None})


def check(response: httpx.Response) -> httpx.Response:
    """``response`` if it succeeded, else :class:`RemoteProblem` with the problem's fields."""
    if response.is_success:
        return response
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise RemoteProblem(response.status_code, response.text)
    issues = [(str(item.get("path", "")), str(item.get("message", "")))
              for item in body.get("errors") or [] if isinstance(item, dict)]
    raise RemoteProblem(response.status_code, str(body.get("detail", response.text)),
                        type=str(body.get("type", "about:blank")), title=body.get("title"),
                        issues=issues)


@contextmanager
def reporting_unreachable(url: str) -> Iterator[None]:
    """Turn connection failures into :class:`ServiceUnreachable` naming ``url``."""
    try:
        yield
    except httpx.TransportError as error:
        raise ServiceUnreachable(f"cannot reach the service at {url}: {error}") from None


def _options(url: str, api_key: str | None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return {"base_url": url, "headers": headers,
            "timeout": httpx.Timeout(CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S)}


def connect(url: str, api_key: str | None) -> httpx.Client:
    """A blocking HTTP client of the service at ``url`` (reads wait past SSE keep-alives)."""
    return httpx.Client(**_options(url, api_key))


def connect_async(url: str, api_key: str | None) -> httpx.AsyncClient:
    """An asyncio HTTP client of the service at ``url``."""
    return httpx.AsyncClient(**_options(url, api_key))


def submit(client: httpx.Client, spec: bytes) -> dict[str, Any]:
    """POST the spec; the 202 answer (id, status, links)."""
    return submit_call(spec).send(client).json()


class Resumption:
    """Where a job's event stream is: the last event id seen, failed reconnections in a row,
    and an optional deadline (``time.monotonic()``) after which waiting is a TimeoutError."""

    def __init__(self, job_id: str, last_event_id: str | None = None,
                 deadline: float | None = None):
        self.path = f"/v1/jobs/{job_id}/events"
        self.last_event_id = last_event_id
        self.deadline = deadline
        self.failures = 0

    def request(self) -> dict[str, Any]:
        """Headers and timeout of the next connection (reads end by the deadline)."""
        headers = {"Last-Event-ID": self.last_event_id} if self.last_event_id else {}
        read = READ_TIMEOUT_S if self.deadline is None else \
            max(0.01, min(READ_TIMEOUT_S, self.deadline - time.monotonic()))
        return {"headers": headers, "timeout": httpx.Timeout(CONNECT_TIMEOUT_S, read=read)}

    def opened(self, response: httpx.Response) -> bool:
        """Whether the stream has events to read (204: the job ended and all were seen)."""
        return check(response).status_code != 204

    def seen(self, event: ServerSentEvent) -> bool:
        """Record ``event``; whether it is the job's last (TimeoutError past the deadline
        when it is not)."""
        self.failures = 0
        self.last_event_id = event.id or self.last_event_id
        if is_terminal_event(event.event, event.data):
            return True
        self.check_deadline()
        return False

    def check_deadline(self) -> None:
        """TimeoutError once the deadline has passed."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise TimeoutError("the job did not end before the timeout")

    def dropped(self, error: httpx.TransportError) -> float:
        """The pause before reconnecting; raises TimeoutError past the deadline and
        ``error`` after :data:`MAX_RECONNECTS` failures in a row."""
        self.check_deadline()
        if self.failures == MAX_RECONNECTS:
            raise error
        self.failures += 1
        return min(MAX_BACKOFF_S, 0.1 * 2 ** self.failures)


def events(client: httpx.Client, job_id: str, last_event_id: str | None = None,
           deadline: float | None = None) -> Iterator[ServerSentEvent]:
    """A job's events until its final one, reconnecting with ``Last-Event-ID`` when dropped."""
    cursor = Resumption(job_id, last_event_id, deadline)
    while True:
        try:
            with connect_sse(client, "GET", cursor.path, **cursor.request()) as source:
                if source.response.is_error:
                    source.response.read()
                if not cursor.opened(source.response):
                    return
                for event in source.iter_sse():
                    yield event
                    if cursor.seen(event):
                        return
        except httpx.TransportError as error:
            time.sleep(cursor.dropped(error))


async def events_async(client: httpx.AsyncClient, job_id: str,
                       last_event_id: str | None = None, deadline: float | None = None
                       ) -> AsyncIterator[ServerSentEvent]:
    """:func:`events` on an asyncio client."""
    cursor = Resumption(job_id, last_event_id, deadline)
    while True:
        try:
            async with aconnect_sse(client, "GET", cursor.path, **cursor.request()) as source:
                if source.response.is_error:
                    await source.response.aread()
                if not cursor.opened(source.response):
                    return
                async for event in source.aiter_sse():
                    yield event
                    if cursor.seen(event):
                        return
        except httpx.TransportError as error:
            await asyncio.sleep(cursor.dropped(error))


def follow(client: httpx.Client, job_id: str,
           on_event: Callable[[str, dict[str, Any]], None]) -> dict[str, Any]:
    """Follow a job to its end, passing each event's name and data to ``on_event`` (progress
    reports, then a succeeded job's ``result`` event with its summary); its final status
    document."""
    for event in events(client, job_id):
        on_event(event.event, json.loads(event.data))
    return job_call(job_id).send(client).json()
