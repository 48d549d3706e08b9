"""Server-Sent Events relay of a job's Redis Stream (``lighttouch:events:{id}``).

Each stream entry becomes one SSE event whose ``id`` is the entry id, so a client that
reconnects with ``Last-Event-ID`` gets every later event exactly once: the backlog after
that id is replayed with ``XRANGE``, then new entries are followed with blocking ``XREAD``
on a connection pool of ``LIGHTTOUCH_SSE_MAX_STREAMS`` connections. A ``result`` event, or a
``status`` event with a final status, ends the stream. While waiting, a comment line (with no
blank line after it) is sent every ``LIGHTTOUCH_SSE_KEEPALIVE_S``; if the job has ended
without a terminal event in its stream (its stream expired, or the job was ended outside the
usual paths), a ``status`` event without id is sent from the job's outcome and the stream
ends. A client that reconnects after the terminal event gets ``204 No Content``, which tells
an EventSource to stop.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis
from rq.job import Job
from starlette.responses import Response, StreamingResponse

from service.errors import BadEventId
from worker.queue.keys import EVENTS, OUTCOME, key
from worker.queue.state import TERMINAL, JobState, is_terminal_event, rq_state

MEDIA_TYPE = "text/event-stream"
#: Client reconnection delay advertised with the first event of every stream (ms).
RETRY_MS = 1000
_BATCH = 500
_EVENT_ID = re.compile(r"([0-9]{1,20})-([0-9]{1,20})")
_MAX_ID_PART = 2**64 - 1
#: A comment line without the blank line that would end an event: clients that dispatch on
#: every blank line (httpx-sse does) would otherwise repeat the last event id.
KEEPALIVE = ": keep-alive\n"

Entry = tuple[bytes, dict[bytes, bytes]]


def is_terminal(fields: dict[bytes, bytes]) -> bool:
    """Whether a stream entry is the job's last event (:func:`is_terminal_event`)."""
    return is_terminal_event(fields[b"event"].decode(), fields[b"data"].decode())


def format_event(entry_id: bytes | None, event: str, data: str) -> str:
    """One SSE event (``id`` omitted for events not from the stream)."""
    head = f"id: {entry_id.decode()}\n" if entry_id else ""
    return f"{head}event: {event}\ndata: {data}\n\n"


def stream_position(last_event_id: str | None) -> str:
    """The stream entry id to resume after: ``Last-Event-ID`` (absent or empty: the start).

    Raises :class:`~service.errors.BadEventId` unless it is ``<ms>-<seq>``, two decimal
    numbers of at most 2^64 - 1 (what Redis accepts).
    """
    if not last_event_id:
        return "0-0"
    match = _EVENT_ID.fullmatch(last_event_id)
    if match is None:
        raise BadEventId(f"{last_event_id[:40]!r} is not an event id; send back the id of an "
                         "event this stream sent (<ms>-<seq>), or none to start over")
    if any(int(part) > _MAX_ID_PART for part in match.groups()):
        raise BadEventId(f"{last_event_id[:40]!r} is out of range: both parts of an event id "
                         "are at most 2^64 - 1")
    return last_event_id


async def event_response(redis: Redis, job_id: str, cursor: str,
                         keepalive_s: float) -> Response:
    """The SSE response for a job the caller may read, resuming after stream entry
    ``cursor`` (204 if nothing more will come)."""
    stream = key(EVENTS, job_id)
    backlog = await _after(redis, stream, cursor)
    if not backlog:
        latest = await redis.xrevrange(stream, count=1)
        if (latest and is_terminal(latest[0][1])) or (not latest and await _ending(redis, job_id)):
            return Response(status_code=204)
    return StreamingResponse(
        _follow(redis, job_id, backlog, cursor, keepalive_s),
        media_type=MEDIA_TYPE, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _after(redis: Redis, stream: str, cursor: str) -> list[Entry]:
    """Every entry after ``cursor`` (``XRANGE`` in batches)."""
    entries: list[Entry] = []
    while batch := await redis.xrange(stream, min=f"({cursor}", count=_BATCH):
        entries.extend(batch)
        cursor = batch[-1][0].decode()
        if len(batch) < _BATCH:
            break
    return entries


async def _follow(redis: Redis, job_id: str, backlog: list[Entry], cursor: str,
                  keepalive_s: float) -> AsyncIterator[str]:
    stream = key(EVENTS, job_id)
    prefix = f"retry: {RETRY_MS}\n"   # sent with the first event: a lone field is no event
    entries = backlog
    while True:
        for entry_id, fields in entries:
            yield prefix + format_event(entry_id, fields[b"event"].decode(),
                                        fields[b"data"].decode())
            prefix = ""
            if is_terminal(fields):
                return
            cursor = entry_id.decode()
        reply = await redis.xread({stream: cursor}, count=_BATCH, block=int(keepalive_s * 1000))
        entries = reply[0][1] if reply else []
        if not entries:
            if (ending := await _ending(redis, job_id)) is not None:
                yield format_event(None, "status", json.dumps(ending))
                return
            yield KEEPALIVE


async def _ending(redis: Redis, job_id: str) -> dict[str, Any] | None:
    """The job's final status and error if it has ended (or vanished), else None."""
    outcome, status = await redis.pipeline(transaction=False).get(key(OUTCOME, job_id)).hget(
        Job.key_for(job_id), "status").execute()
    if outcome is not None:
        record = json.loads(outcome)
        return {"status": record["status"], "error": record["error"]}
    if status is None:
        return {"status": str(JobState.FAILED), "error": "the job's records have expired"}
    state = rq_state(status.decode())
    return {"status": str(state), "error": None} if state in TERMINAL else None
