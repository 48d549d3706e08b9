"""The ``lighttouch submit`` client: submit a spec, follow its events (resuming), get the result."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, connect_sse

from service.errors import RemoteProblem, ServiceUnreachable
from worker.queue.state import is_terminal_event

#: Consecutive failed reconnections before ``follow`` gives up, and the longest pause.
MAX_RECONNECTS = 10
MAX_BACKOFF_S = 5.0


def check(response: httpx.Response) -> httpx.Response:
    """``response`` if it succeeded, else :class:`RemoteProblem` with the service's detail."""
    if response.is_success:
        return response
    try:
        detail = response.json().get("detail", response.text)
    except ValueError:
        detail = response.text
    raise RemoteProblem(response.status_code, detail)


@contextmanager
def reporting_unreachable(url: str) -> Iterator[None]:
    """Turn connection failures into :class:`ServiceUnreachable` naming ``url``."""
    try:
        yield
    except httpx.TransportError as error:
        raise ServiceUnreachable(f"cannot reach the service at {url}: {error}") from None


def connect(url: str, api_key: str | None) -> httpx.Client:
    """An HTTP client for the service at ``url`` (reads wait past SSE keep-alives)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=url, headers=headers, timeout=httpx.Timeout(10.0, read=60.0))


def submit(client: httpx.Client, spec: bytes) -> dict[str, Any]:
    """POST the spec; the 202 answer (id, status, links)."""
    return check(client.post("/v1/jobs", content=spec,
                             headers={"Content-Type": "application/json"})).json()


def events(client: httpx.Client, job_id: str, last_event_id: str | None = None
           ) -> Iterator[ServerSentEvent]:
    """A job's events until its final one, reconnecting with ``Last-Event-ID`` when dropped."""
    failures = 0
    while True:
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        try:
            with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events",
                             headers=headers) as source:
                if source.response.status_code == 204:
                    return
                check(source.response)
                for event in source.iter_sse():
                    failures = 0
                    last_event_id = event.id or last_event_id
                    yield event
                    if is_terminal_event(event.event, event.data):
                        return
        except httpx.TransportError:
            if failures == MAX_RECONNECTS:
                raise
        failures += 1
        time.sleep(min(MAX_BACKOFF_S, 0.1 * 2 ** failures))


def follow(client: httpx.Client, job_id: str,
           on_progress: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Follow a job to its end, reporting progress; its final status document."""
    for event in events(client, job_id):
        if event.event == "progress":
            on_progress(json.loads(event.data))
    return check(client.get(f"/v1/jobs/{job_id}")).json()
