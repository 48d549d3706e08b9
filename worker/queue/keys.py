"""The queue's Redis key schema (see :mod:`worker.queue`) and the one RQ queue."""

from __future__ import annotations

from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

QUEUE_NAME = "lighttouch"
SERIALIZER = JSONSerializer
PREFIX = "lighttouch"
SPEC, EVENTS, PROGRESS, OUTCOME, RESULT, VECTORS, ACTIVE = (
    "spec", "events", "progress", "outcome", "result", "vectors", "active")
METRICS_KEY = f"{PREFIX}:metrics"
REAPER_LOCK_KEY = f"{PREFIX}:reaper"


def key(kind: str, name: str) -> str:
    """The Redis key of one of a job's (or tenant's) records, e.g. ``lighttouch:events:{id}``."""
    return f"{PREFIX}:{kind}:{name}"


def job_queue(connection: Redis) -> Queue:
    """The one queue every API and worker uses."""
    return Queue(QUEUE_NAME, connection=connection, serializer=SERIALIZER)
