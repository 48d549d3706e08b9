"""The Redis client of a queue worker: it rides out a Redis restart.

A restart with AOF (``SHUTDOWN``, a crash, a failover) refuses connections for a second or
two, then answers ``LOADING`` while it reads its file. Every command of a worker and of its
work horses (dequeueing, heartbeats, progress, storing the result) is retried through such
an outage with exponential backoff, for about :data:`OUTAGE_S` seconds, before it fails.
"""

from __future__ import annotations

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError
from redis.retry import Retry

#: Backoff of the retries: BASE_S, doubling, at most CAP_S between attempts.
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.05, 2.0
#: Attempts after the first: 0.1 + 0.2 + ... + 1.6 s, then 2 s each, about 43 s in all.
RETRIES = 25
OUTAGE_S = 43


def worker_connection(url: str) -> Redis:
    """A client of ``url`` whose commands retry through a Redis restart."""
    retry = Retry(ExponentialBackoff(cap=BACKOFF_CAP_S, base=BACKOFF_BASE_S), RETRIES,
                  supported_errors=(ConnectionError, TimeoutError, BusyLoadingError))
    return Redis.from_url(url, retry=retry, health_check_interval=30)
