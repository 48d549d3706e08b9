"""The queue's Redis key schema (see :mod:`worker.queue`) and the one RQ queue.

Every key the queue writes is named here: a job's records by :func:`key` with one of the
kinds below, the tenant-wide ones by :func:`key` with the tenant, and RQ's own keys by RQ.
"""

from __future__ import annotations

import hashlib

from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

QUEUE_NAME = "lighttouch"
SERIALIZER = JSONSerializer
PREFIX = "lighttouch"
#: Kinds of a job's records (``lighttouch:{kind}:{job id}``).
SPEC, EVENTS, PROGRESS, OUTCOME, RESULT, VECTORS = (
    "spec", "events", "progress", "outcome", "result", "vectors")
#: Kinds of a tenant's records (``lighttouch:{kind}:{tenant}``): the set of its jobs not yet
#: ended, and its jobs by submit time (for listing).
ACTIVE, JOBS = "active", "jobs"
METRICS_KEY = f"{PREFIX}:metrics"
REAPER_LOCK_KEY = f"{PREFIX}:reaper"
#: The run id of the Redis server the reaper last saw, and the grace period after a restart.
REDIS_RUN_KEY, REAPER_GRACE_KEY = f"{PREFIX}:redis-run", f"{PREFIX}:reaper-grace"
#: Workers still warming up (not yet on the queue): sorted set of worker names, each scored by
#: the Unix time its announcement lapses unless renewed (``/readyz`` says "warming up").
WARMING_KEY = f"{PREFIX}:warming"


def key(kind: str, name: str) -> str:
    """The Redis key of one of a job's (or tenant's) records, e.g. ``lighttouch:events:{id}``."""
    return f"{PREFIX}:{kind}:{name}"


def idempotency_key(tenant: str, idempotency: str) -> str:
    """``lighttouch:idempotency:{tenant}:{sha256(idempotency)}``: the first submission under
    a client's ``Idempotency-Key``."""
    digest = hashlib.sha256(idempotency.encode()).hexdigest()
    return key("idempotency", f"{tenant}:{digest}")


def job_queue(connection: Redis) -> Queue:
    """The one queue every API and worker uses."""
    return Queue(QUEUE_NAME, connection=connection, serializer=SERIALIZER)
