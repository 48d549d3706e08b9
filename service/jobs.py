"""The queue's job operations (:mod:`worker.queue`) as the API's documents: submit, look up,
cancel, list, fetch results."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import urlencode

from redis import Redis

from service.models import JobPage, JobProgress, JobView, Submitted, job_links
from service.settings import ServiceSettings
from service.validation import place_bounded
from worker.data.references import check_references
from worker.errors import JobConflict
from worker.queue.cancel import cancel_job
from worker.queue.records import (
    JobFilter,
    JobRecord,
    job_page,
    job_record,
    stored_result,
    stored_vectors,
)
from worker.queue.state import TERMINAL, JobState
from worker.queue.submit import Admission, submit_job
from worker.settings import data_roots
from worker.spec.models import Spec

VECTOR_NAMES = ("projected", "mean", "mixture")


def submit(redis: Redis, settings: ServiceSettings, tenant: str, spec: Spec, text: str,
           idempotency: str | None) -> tuple[Submitted, bool]:
    """Queue ``spec`` (``text`` as submitted); the answer and whether it is a replay.
    References the data policy refuses without reading them are refused here, not queued,
    and so is a job over the per-job memory budget with nowhere else to run, placed from its
    data's headers as its worker would (:func:`service.validation.place_bounded`)."""
    check_references(spec, data_roots())
    place_bounded(spec, max_job_bytes=settings.max_job_bytes,
                  timeout_s=settings.placement_timeout_s,
                  processes=settings.validate_processes)
    admission = Admission(max_active_jobs=settings.max_active_jobs,
                          job_timeout_s=settings.job_timeout_s,
                          result_ttl_s=settings.result_ttl_s,
                          max_job_bytes=settings.max_job_bytes)
    job_id, replayed = submit_job(redis, admission, tenant, spec, text, idempotency)
    return Submitted(id=job_id, status=JobState.QUEUED, links=job_links(job_id)), replayed


def _view(record: JobRecord) -> JobView:
    fields = asdict(record)
    for name in ("progress", "last_progress"):
        fields[name] = JobProgress(**fields[name]) if fields[name] else None
    return JobView(**fields, links=job_links(record.id))


def view(redis: Redis, tenant: str, job_id: str) -> JobView:
    """The status document of one of the tenant's jobs."""
    return _view(job_record(redis, tenant, job_id))


def cancel(redis: Redis, tenant: str, job_id: str) -> JobView:
    """Cancel a queued or running job (idempotent); :class:`JobConflict` if it already ended."""
    return _view(cancel_job(redis, tenant, job_id))


def page(redis: Redis, tenant: str, offset: int, limit: int, only: JobFilter) -> JobPage:
    """The tenant's jobs that ``only`` admits, newest first, with the following page's URL
    if there is one."""
    records, more = job_page(redis, tenant, offset, limit, only)
    filters = {name: value for name, value in asdict(only).items() if value is not None}
    query = urlencode({"offset": offset + limit, "limit": limit, **filters})
    following = f"/v1/jobs?{query}" if more else None
    return JobPage(jobs=[_view(record) for record in records], next=following)


def result_json(redis: Redis, tenant: str, job_id: str) -> bytes:
    """The stored Result JSON of a succeeded job; :class:`JobConflict` before that."""
    _require_success(view(redis, tenant, job_id))
    return stored_result(redis, job_id)


def solution_npy(redis: Redis, tenant: str, job_id: str, vector: str | None) -> bytes:
    """A result vector as ``.npy`` bytes: ``projected`` (default, else ``mean``) or others."""
    _require_success(view(redis, tenant, job_id))
    stored = stored_vectors(redis, job_id)
    name = vector or next(name for name in VECTOR_NAMES if name in stored)
    if name not in stored:
        raise JobConflict(f"this result has no {name!r} vector (the spec's output options "
                          f"left it out); available: {sorted(stored)}")
    return stored[name]


def _require_success(current: JobView) -> None:
    """:class:`JobConflict` saying why a job that has not succeeded has no result."""
    if current.status == JobState.SUCCEEDED:
        return
    if current.status in TERMINAL:
        raise JobConflict(f"job {current.id} {current.status}" + (
            f": {current.error}" if current.error else "") + "; it has no result")
    raise JobConflict(f"job {current.id} is {current.status}; the result exists once it has "
                      f"succeeded (follow {current.links.events})")
