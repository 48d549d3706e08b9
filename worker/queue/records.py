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
    algorithm : str or None
        The spec's ``solver.algorithm``; for ``auto``, the algorithm it chose once the job
        has succeeded.
    created_at, started_at, ended_at : datetime or None
        When it was submitted, started running and ended.
    progress : dict or None
        While it has not ended: its latest progress report (``iteration``, ``iterations``,
        ``objective``, ...).
    last_progress : dict or None
        Once it has ended: the last progress report it sent (history: the running average at
        that iteration, not the outcome).
    summary : dict or None
        Once it has succeeded: its Result's figures (:class:`worker.result.Summary`).
    error : str or None
        Why it failed, for a failed job.
    """

    id: str
    status: JobState
    name: str | None
    algorithm: str | None
    created_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    progress: dict[str, Any] | None
    last_progress: dict[str, Any] | None
    summary: dict[str, Any] | None
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
    ongoing = state not in TERMINAL
    return JobRecord(id=job.id, status=state, name=job.meta.get("name"),
                     algorithm=job.meta.get("algorithm"),
                     created_at=job.created_at, started_at=job.started_at, ended_at=ended,
                     progress=progress if ongoing else None,
                     last_progress=None if ongoing else progress,
                     summary=(outcome or {}).get("summary"), error=error)


@dataclass(frozen=True)
class JobFilter:
    """Which of a tenant's jobs a listing shows.

    Attributes
    ----------
    status : JobState or None
        Only jobs with this status (None: any).
    algorithm : str or None
        Only jobs whose record names this algorithm (None: any).
    """

    status: JobState | None = None
    algorithm: str | None = None

    def __bool__(self) -> bool:
        return self.status is not None or self.algorithm is not None

    def admits(self, record: JobRecord) -> bool:
        """Whether ``record`` is one of the jobs asked for."""
        return ((self.status is None or record.status == self.status)
                and (self.algorithm is None or record.algorithm == self.algorithm))


#: Jobs read per round trip while a filtered listing scans the tenant's index.
_SCAN_BATCH = 200


def job_page(connection: Redis, tenant: str, offset: int, limit: int,
             only: JobFilter = JobFilter()) -> tuple[list[JobRecord], bool]:
    """Up to ``limit`` of the tenant's jobs from ``offset``, newest first, and whether more
    follow; expired jobs are dropped from the tenant's index on the way.

    With a filter ``only``, ``offset`` counts the jobs it admits, and the index (at most
    :data:`~worker.queue.submit.MAX_LISTED_JOBS` entries) is scanned from the newest job.
    """
    if not only:
        records, _ = _records_at(connection, tenant, offset, limit + 1)
        return records[:limit], len(records) > limit
    admitted: list[JobRecord] = []
    start, exhausted = 0, False
    while len(admitted) <= offset + limit and not exhausted:
        batch, exhausted = _records_at(connection, tenant, start, _SCAN_BATCH)
        admitted.extend(record for record in batch if only.admits(record))
        start += len(batch)
    return admitted[offset:offset + limit], len(admitted) > offset + limit


def _records_at(connection: Redis, tenant: str, start: int, count: int
                ) -> tuple[list[JobRecord], bool]:
    """Records of up to ``count`` of the tenant's jobs from rank ``start``, newest first, and
    whether the index ended there; expired jobs are dropped from the index (so later jobs'
    ranks shift down by as many)."""
    index = key(JOBS, tenant)
    ids = [member.decode() for member in connection.zrevrange(index, start, start + count - 1)]
    fetched = Job.fetch_many(ids, connection=connection, serializer=SERIALIZER)
    expired = [job_id for job_id, job in zip(ids, fetched, strict=True) if job is None]
    if expired:
        connection.zrem(index, *expired)
    records = job_records(connection, [job for job in fetched if job is not None])
    return records, len(ids) < count


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
