"""A job's event stream and its one outcome: every way a job ends goes through :func:`finish`,
and nothing is appended after its terminal event.

:func:`finish` claims the outcome key first (``SET NX``, storing a succeeded job's result in
the same server-side step), then appends the terminal event;
:func:`append_unless_ended` appends in one server-side step that checks the outcome key, so
an event that would follow the terminal one (a progress report racing a cancel) is dropped.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from redis import Redis
from redis.client import Pipeline
from rq.job import Job

from worker.queue.keys import (
    ACTIVE,
    EVENTS,
    METRICS_KEY,
    OUTCOME,
    PROGRESS,
    RESULT,
    SPEC,
    VECTORS,
    key,
)
from worker.queue.state import JobState

#: Events kept per job stream (``XADD MAXLEN ~``): over an hour of progress at 4 per second.
STREAM_MAXLEN = 16_384
#: Upper bounds (seconds) of the job-duration histogram buckets kept in Redis.
DURATION_BUCKETS_S = (1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, float("inf"))


def publish(pipe: Pipeline, job_id: str, event: str, data: dict[str, Any], ttl: int) -> None:
    """Append one event to the job's stream (queued on ``pipe``) and extend the stream's life."""
    stream = key(EVENTS, job_id)
    pipe.xadd(stream, {"event": event, "data": json_text(data)}, maxlen=STREAM_MAXLEN,
              approximate=True)
    pipe.expire(stream, ttl)


_APPEND_UNLESS_ENDED = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[2], 'data', ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
if ARGV[5] == '1' then redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[4]) end
return 1
"""


def append_unless_ended(connection: Redis, job_id: str, event: str, data: dict[str, Any],
                        ttl: int, *, latest_progress: bool = False) -> bool:
    """Append one event to the stream of a job that has not ended; False if it has.

    With ``latest_progress``, ``data`` also becomes the job's latest progress. Both keys
    expire ``ttl`` seconds later.
    """
    keys = [key(OUTCOME, job_id), key(EVENTS, job_id), key(PROGRESS, job_id)]
    args = [STREAM_MAXLEN, event, json_text(data), ttl, int(latest_progress)]
    return bool(connection.register_script(_APPEND_UNLESS_ENDED)(keys=keys, args=args))


def json_text(data: dict[str, Any]) -> str:
    """Strict JSON of an event payload: non-finite numbers (a diverging run) become null."""
    return json.dumps(_finite(data), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {name: _finite(item) for name, item in value.items()}
    return value


_CLAIM_OUTCOME = """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
  redis.call('DEL', KEYS[3])
  for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
  redis.call('EXPIRE', KEYS[3], ARGV[2])
end
return 1
"""


@dataclass(frozen=True)
class StoredResult:
    """What a succeeded job leaves: the Result JSON, its vectors (name -> ``.npy`` bytes) and
    its summary (:class:`worker.result.Summary` as a dict), which the job's outcome record
    keeps, so that its status document shows the Result's figures, not the last progress."""

    result_json: str
    vectors: dict[str, bytes]
    summary: dict[str, Any]


def finish(connection: Redis, job: Job, state: JobState, *, error: str | None = None,
           event: tuple[str, dict[str, Any]] | None = None,
           stored: StoredResult | None = None) -> bool:
    """Record how ``job`` ended and publish its terminal event; False if it had already ended.

    The first caller wins: its outcome, and the ``stored`` result with it, are written in one
    server-side step only if no outcome exists, so a result that arrives after the job was
    ended otherwise (cancelled, or failed by the reaper) is dropped, never stored. The default
    event is ``status`` with ``{"status": state, "error": error}``.
    """
    ttl = job.result_ttl
    ended = time.time()
    outcome = {"status": str(state), "error": error, "ended_at": ended,
               "summary": stored.summary if stored else None}
    keys = [key(OUTCOME, job.id), key(RESULT, job.id), key(VECTORS, job.id)]
    args: list[Any] = [json_text(outcome), ttl, stored.result_json if stored else ""]
    for name, content in (stored.vectors if stored else {}).items():
        args += [name, content]
    if not connection.register_script(_CLAIM_OUTCOME)(keys=keys, args=args):
        return False
    name, data = event or ("status", {"status": str(state), "error": error})
    with connection.pipeline(transaction=False) as pipe:
        publish(pipe, job.id, name, data, ttl)
        pipe.expire(key(SPEC, job.id), ttl)
        pipe.expire(key(PROGRESS, job.id), ttl)
        pipe.srem(key(ACTIVE, job.meta.get("tenant", "")), job.id)
        pipe.hincrby(METRICS_KEY, f"ended:{state}", 1)
        if job.started_at is not None:
            _record_duration(pipe, ended - job.started_at.timestamp())
        pipe.execute()
    return True


def _record_duration(pipe: Pipeline, seconds: float) -> None:
    """Count one job duration in the Redis-held histogram (non-cumulative buckets)."""
    bucket = next(bound for bound in DURATION_BUCKETS_S if seconds <= bound)
    pipe.hincrby(METRICS_KEY, f"duration_bucket:{bucket}", 1)
    pipe.hincrbyfloat(METRICS_KEY, "duration_sum", seconds)
