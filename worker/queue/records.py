"""Reading a tenant's jobs: one job, a page of the newest, their stored results."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from redis import Redis
from rq.exceptions import NoSuchJobError
from rq.job import Job

from worker.errors import JobNotFound
from worker.queue.keys import JOBS, OUTCOME, PROGRESS, RESULT, SERIALIZER, VECTORS, key
from worker.queue.state import TERMINAL, JobState, rq_state

JOB_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class JobRecord:
    """What the queue knows about one job.

    Attributes
    ----------
    id, status, name : str, JobState, str or None
        The job's id, status and the spec's ``name``.
    created_at, started_at, ended_at : datetime or None
        When it was submitted, started running and ended.
    progress : dict or None
        Its latest progress report (``iteration``, ``iterations``, ``objective``, ...).
    error : str or None
        Why it failed, for a failed job.
    """

    id: str
    status: JobState
    name: str | None
    created_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    progress: dict[str, Any] | None
    error: str | None


def load_job(connection: Redis, tenant: str, job_id: str) -> Job:
    """The RQ job ``job_id`` if it belongs to ``tenant``; :class:`JobNotFound` otherwise."""
    if not JOB_ID.fullmatch(job_id):
        raise JobNotFound(job_id)
    try:
        job = Job.fetch(job_id, connection=connection, serializer=SERIALIZER)
    except NoSuchJobError:
        raise JobNotFound(job_id) from None
    if job.meta.get("tenant") != tenant:
        raise JobNotFound(job_id)
    return job


def job_record(connection: Redis, tenant: str, job_id: str) -> JobRecord:
    """The record of one of the tenant's jobs; :class:`JobNotFound` for any other id."""
    return job_records(connection, [load_job(connection, tenant, job_id)])[0]


def job_records(connection: Redis, jobs: list[Job]) -> list[JobRecord]:
    """Records of ``jobs`` (their outcomes and latest progress read in one round trip)."""
    if not jobs:
        return []
    values = connection.mget([key(kind, job.id) for job in jobs for kind in (OUTCOME, PROGRESS)])
    return [_record(job, _json(values[2 * k]), _json(values[2 * k + 1]))
            for k, job in enumerate(jobs)]


def _json(value: bytes | None) -> Any:
    return json.loads(value) if value is not None else None


def _record(job: Job, outcome: dict | None, progress: dict | None) -> JobRecord:
    if outcome:
        state, error = JobState(outcome["status"]), outcome["error"]
        ended = datetime.fromtimestamp(outcome["ended_at"], UTC)
    else:
        state = rq_state(job.get_status(refresh=False))
        error = ("the job failed outside LightTouch's handlers; see the worker log"
                 if state == JobState.FAILED else None)
        ended = job.ended_at if state in TERMINAL else None
    return JobRecord(id=job.id, status=state, name=job.meta.get("name"),
                     created_at=job.created_at, started_at=job.started_at, ended_at=ended,
                     progress=progress, error=error)


def job_page(connection: Redis, tenant: str, offset: int, limit: int
             ) -> tuple[list[JobRecord], bool]:
    """Up to ``limit`` of the tenant's jobs from ``offset``, newest first, and whether more
    follow; expired jobs are dropped from the tenant's index on the way."""
    index = key(JOBS, tenant)
    ids = [member.decode() for member in connection.zrevrange(index, offset, offset + limit)]
    shown, more = ids[:limit], len(ids) > limit
    fetched = Job.fetch_many(shown, connection=connection, serializer=SERIALIZER)
    expired = [job_id for job_id, job in zip(shown, fetched, strict=True) if job is None]
    if expired:
        connection.zrem(index, *expired)
    return job_records(connection, [job for job in fetched if job is not None]), more


def stored_result(connection: Redis, job_id: str) -> bytes:
    """The Result JSON a succeeded job stored; :class:`JobNotFound` once it has expired."""
    stored = connection.get(key(RESULT, job_id))
    if stored is None:
        raise JobNotFound(job_id)
    return stored


def stored_vectors(connection: Redis, job_id: str) -> dict[str, bytes]:
    """The result vectors a succeeded job stored, by name (``mean``, ``projected``,
    ``mixture``), each the bytes of a float64 ``.npy`` file; :class:`JobNotFound` once they
    have expired."""
    stored = connection.hgetall(key(VECTORS, job_id))
    if not stored:
        raise JobNotFound(job_id)
    return {name.decode(): value for name, value in stored.items()}
