"""Jobs for the queue tests: the local stack's small spec, submitted as the API does."""

from __future__ import annotations

import json

from redis import Redis

from tests.local_stack import small_spec
from worker.queue.keys import EVENTS, key
from worker.queue.submit import Admission, submit_job
from worker.spec.models import parse_spec

#: A progress report as a running job sends it.
REPORT = {"iteration": 10, "iterations": 100, "objective": 0.5, "max_violation": 0.0,
          "constraint_checks": 30, "elapsed_s": 0.1}
ADMISSION = Admission(max_active_jobs=3, job_timeout_s=3600.0, result_ttl_s=600)


def submitted(connection: Redis, tenant: str = "alpha", admission: Admission = ADMISSION,
              idempotency: str | None = None, **solver) -> str:
    """Queue the small spec (``solver``: other ``iterations``, ``time_limit_s`` or ``seed``)
    for ``tenant``; the job id."""
    text = json.dumps(small_spec(**solver))
    job_id, _ = submit_job(connection, admission, tenant, parse_spec(json.loads(text)), text,
                           idempotency)
    return job_id


def stream(connection: Redis, job_id: str) -> list[tuple[str, dict]]:
    """The job's events in order: (event name, decoded data)."""
    return [(fields[b"event"].decode(), json.loads(fields[b"data"]))
            for _, fields in connection.xrange(key(EVENTS, job_id))]
