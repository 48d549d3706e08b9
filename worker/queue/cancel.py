"""Cancelling a job: end it ``cancelled``, then take it off the queue or kill its work horse."""

from __future__ import annotations

from redis import Redis
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation
from rq.job import Job, JobStatus

from worker.errors import JobConflict
from worker.queue.events import finish
from worker.queue.keys import SERIALIZER
from worker.queue.records import JobRecord, job_records, load_job
from worker.queue.state import JobState, rq_state


def cancel_job(connection: Redis, tenant: str, job_id: str) -> JobRecord:
    """Cancel one of the tenant's queued or running jobs (idempotent); its record.

    Raises :class:`~worker.errors.JobConflict` if the job had already ended otherwise, and
    :class:`~worker.errors.JobNotFound` for an id that is not the tenant's.
    """
    job = load_job(connection, tenant, job_id)
    if finish(connection, job, JobState.CANCELLED):
        _stop(connection, job)
    current = job_records(connection, [job])[0]
    if current.status != JobState.CANCELLED:
        raise JobConflict(f"job {job_id} already ended: {current.status}")
    return current


def _stop(connection: Redis, job: Job) -> None:
    """Take a job whose outcome is already ``cancelled`` off the queue, or kill its work horse.

    A horse that starts after the outcome was written sees it and returns at once, so a
    job caught between queue and horse needs nothing more.
    """
    status = job.get_status()
    try:
        if status == JobStatus.STARTED:
            send_stop_job_command(connection, job.id, serializer=SERIALIZER)
        elif rq_state(status) == JobState.QUEUED:
            job.cancel()
            connection.expire(job.key, job.result_ttl)
    except InvalidJobOperation:
        pass
