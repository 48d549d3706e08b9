"""Job operations behind the routes: submit, look up for a tenant, cancel, list, fetch results.

Keys the API owns besides those of :mod:`worker.queue`: ``lighttouch:jobs:{tenant}`` (sorted
set of the tenant's job ids by submit time, for listing) and
``lighttouch:idempotency:{tenant}:{sha256(key)}`` (the first answer to an ``Idempotency-Key``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from redis import Redis, WatchError
from rq import Callback, Queue
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus

from service.errors import JobConflict, JobNotFound, TooManyJobs
from service.models import JobPage, JobProgress, JobView, Submitted, job_links
from worker.queue.events import finish, publish
from worker.queue.keys import ACTIVE, OUTCOME, PROGRESS, RESULT, SERIALIZER, SPEC, VECTORS, key
from worker.queue.state import TERMINAL, JobState
from worker.queue.task import hard_timeout, job_failed, run_job
from worker.settings import ServiceSettings
from worker.spec.models import Spec

JOB_ID = re.compile(r"[0-9a-f]{32}")
#: Newest jobs kept in a tenant's listing index.
MAX_LISTED_JOBS = 10_000
#: ``Retry-After`` of a 429: a guess at when a slot frees up.
BUSY_RETRY_AFTER_S = 10
VECTOR_NAMES = ("projected", "mean", "mixture")

RQ_STATES = {
    JobStatus.CREATED: JobState.QUEUED, JobStatus.QUEUED: JobState.QUEUED,
    JobStatus.DEFERRED: JobState.QUEUED, JobStatus.SCHEDULED: JobState.QUEUED,
    JobStatus.STARTED: JobState.RUNNING, JobStatus.FINISHED: JobState.SUCCEEDED,
    JobStatus.FAILED: JobState.FAILED, JobStatus.STOPPED: JobState.CANCELLED,
    JobStatus.CANCELED: JobState.CANCELLED,
}


def rq_state(status: str) -> JobState:
    """The API status of an RQ job status (``started`` → ``running``, ...)."""
    return RQ_STATES.get(status, JobState.QUEUED)


def submit(redis: Redis, queue: Queue, settings: ServiceSettings, tenant: str, spec: Spec,
           text: str, idempotency: str | None) -> tuple[Submitted, bool]:
    """Enqueue ``spec`` (``text`` as submitted); return the answer and whether it is a replay."""
    fingerprint = hashlib.sha256(text.encode()).hexdigest()
    job_id = uuid.uuid4().hex
    answer = Submitted(id=job_id, status=JobState.QUEUED, links=job_links(job_id))
    claim = _idempotency_key(tenant, idempotency) if idempotency else None
    with redis.pipeline() as pipe:
        if claim:
            pipe.watch(claim)
            if (stored := pipe.get(claim)) is not None:
                return _replay(stored, fingerprint), True
        _reserve_slot(redis, settings, tenant, job_id)
        try:
            pipe.multi()
            _enqueue(pipe, queue, settings, tenant, spec, text, job_id)
            if claim:
                record = {"fingerprint": fingerprint, "answer": answer.model_dump(mode="json")}
                pipe.set(claim, json.dumps(record), ex=settings.result_ttl_s)
            pipe.execute()
        except WatchError:   # the same key was submitted concurrently and won
            redis.srem(key(ACTIVE, tenant), job_id)
            return _replay(redis.get(claim), fingerprint), True
        except BaseException:
            redis.srem(key(ACTIVE, tenant), job_id)
            raise
    return answer, False


def _idempotency_key(tenant: str, idempotency: str) -> str:
    digest = hashlib.sha256(idempotency.encode()).hexdigest()
    return key("idempotency", f"{tenant}:{digest}")


def _replay(stored: bytes | None, fingerprint: str) -> Submitted:
    record = json.loads(stored) if stored else None
    if record is None or record["fingerprint"] != fingerprint:
        raise JobConflict("this Idempotency-Key was already used with a different body; "
                          "use a new key for a different spec")
    return Submitted.model_validate(record["answer"])


def _reserve_slot(redis: Redis, settings: ServiceSettings, tenant: str, job_id: str) -> None:
    """Count ``job_id`` against the tenant's cap on active jobs, or raise :class:`TooManyJobs`."""
    active = key(ACTIVE, tenant)
    with redis.pipeline(transaction=False) as pipe:
        pipe.sadd(active, job_id)
        pipe.scard(active)
        count = pipe.execute()[1]
    if count > settings.max_active_jobs and (
            _prune_active(redis, active, job_id) > settings.max_active_jobs):
        redis.srem(active, job_id)
        raise TooManyJobs(settings.max_active_jobs, BUSY_RETRY_AFTER_S)


def _prune_active(redis: Redis, active: str, reserved: str) -> int:
    """Drop ended or vanished jobs (not the one just ``reserved``) from an active set; its size.

    This repairs the count should a job have ended without :func:`worker.jobs.finish`.
    """
    members = [member.decode() for member in redis.smembers(active)
               if member.decode() != reserved]
    with redis.pipeline(transaction=False) as pipe:
        for job_id in members:
            pipe.exists(key(OUTCOME, job_id), Job.key_for(job_id))
        checks = pipe.execute()
    stale = [job_id for job_id, found in zip(members, checks, strict=True) if found != 1]
    if stale:
        redis.srem(active, *stale)
    return len(members) - len(stale) + 1


def _enqueue(pipe: Any, queue: Queue, settings: ServiceSettings, tenant: str, spec: Spec, text: str,
             job_id: str) -> None:
    """Queue the RQ job and its records on ``pipe`` (inside the submit transaction)."""
    time_limit = min(spec.solver.time_limit_s, settings.job_timeout_s)
    timeout = hard_timeout(time_limit)
    queue.enqueue_call(
        run_job, args=(time_limit,), job_id=job_id, timeout=timeout,
        result_ttl=settings.result_ttl_s, failure_ttl=settings.result_ttl_s,
        description=f"solve {spec.name or job_id}", meta={"tenant": tenant, "name": spec.name},
        on_failure=Callback(job_failed), pipeline=pipe)
    pipe.set(key(SPEC, job_id), text)
    publish(pipe, job_id, "status", {"status": str(JobState.QUEUED)},
            timeout + settings.result_ttl_s)
    index = key("jobs", tenant)
    pipe.zadd(index, {job_id: time.time()})
    pipe.zremrangebyrank(index, 0, -MAX_LISTED_JOBS - 1)


def load(redis: Redis, tenant: str, job_id: str) -> Job:
    """The RQ job ``job_id`` if it belongs to ``tenant``; :class:`JobNotFound` otherwise."""
    if not JOB_ID.fullmatch(job_id):
        raise JobNotFound(job_id)
    try:
        job = Job.fetch(job_id, connection=redis, serializer=SERIALIZER)
    except NoSuchJobError:
        raise JobNotFound(job_id) from None
    if job.meta.get("tenant") != tenant:
        raise JobNotFound(job_id)
    return job


def views(redis: Redis, jobs: list[Job]) -> list[JobView]:
    """Status documents of ``jobs`` (their outcomes and latest progress in one round trip)."""
    if not jobs:
        return []
    values = redis.mget([key(kind, job.id) for job in jobs for kind in (OUTCOME, PROGRESS)])
    return [_view(job, _json(values[2 * k]), _json(values[2 * k + 1]))
            for k, job in enumerate(jobs)]


def _json(value: bytes | None) -> Any:
    return json.loads(value) if value is not None else None


def _view(job: Job, outcome: dict | None, progress: dict | None) -> JobView:
    if outcome:
        state, error = JobState(outcome["status"]), outcome["error"]
        ended = datetime.fromtimestamp(outcome["ended_at"], UTC)
    else:
        state = rq_state(job.get_status(refresh=False))
        error = ("the job failed outside LightTouch's handlers; see the worker log"
                 if state == JobState.FAILED else None)
        ended = job.ended_at if state in TERMINAL else None
    return JobView(id=job.id, status=state, name=job.meta.get("name"),
                   created_at=job.created_at, started_at=job.started_at,
                   ended_at=ended, progress=JobProgress(**progress) if progress else None,
                   error=error, links=job_links(job.id))


def view(redis: Redis, tenant: str, job_id: str) -> JobView:
    """The status document of one of the tenant's jobs."""
    return views(redis, [load(redis, tenant, job_id)])[0]


def cancel(redis: Redis, tenant: str, job_id: str) -> JobView:
    """Cancel a queued or running job (idempotent); :class:`JobConflict` if it already ended."""
    job = load(redis, tenant, job_id)
    if finish(redis, job, JobState.CANCELLED):
        _stop(redis, job)
    current = views(redis, [job])[0]
    if current.status != JobState.CANCELLED:
        raise JobConflict(f"job {job_id} already ended: {current.status}")
    return current


def _stop(redis: Redis, job: Job) -> None:
    """Take a job whose outcome is already ``cancelled`` off the queue, or kill its work horse.

    A horse that starts after the outcome was written sees it and returns at once, so a
    job caught between queue and horse needs nothing more.
    """
    status = job.get_status()
    try:
        if status == JobStatus.STARTED:
            send_stop_job_command(redis, job.id, serializer=SERIALIZER)
        elif rq_state(status) == JobState.QUEUED:
            job.cancel()
            redis.expire(job.key, job.result_ttl)
    except InvalidJobOperation:
        pass


def page(redis: Redis, tenant: str, offset: int, limit: int) -> JobPage:
    """The tenant's jobs, newest first; expired jobs are dropped from the index on the way."""
    index = key("jobs", tenant)
    ids = [member.decode() for member in redis.zrevrange(index, offset, offset + limit)]
    shown, more = ids[:limit], len(ids) > limit
    fetched = Job.fetch_many(shown, connection=redis, serializer=SERIALIZER)
    expired = [job_id for job_id, job in zip(shown, fetched, strict=True) if job is None]
    if expired:
        redis.zrem(index, *expired)
    following = f"/v1/jobs?offset={offset + limit}&limit={limit}" if more else None
    return JobPage(jobs=views(redis, [job for job in fetched if job is not None]), next=following)


def result_json(redis: Redis, tenant: str, job_id: str) -> bytes:
    """The stored Result JSON of a succeeded job; :class:`JobConflict` before that."""
    current = view(redis, tenant, job_id)
    if current.status != JobState.SUCCEEDED:
        raise JobConflict(_not_succeeded(current))
    stored = redis.get(key(RESULT, job_id))
    if stored is None:
        raise JobNotFound(job_id)
    return stored


def solution_npy(redis: Redis, tenant: str, job_id: str, vector: str | None) -> bytes:
    """A result vector as ``.npy`` bytes: ``projected`` (default, else ``mean``) or others."""
    current = view(redis, tenant, job_id)
    if current.status != JobState.SUCCEEDED:
        raise JobConflict(_not_succeeded(current))
    stored = redis.hgetall(key(VECTORS, job_id))
    if not stored:
        raise JobNotFound(job_id)
    name = vector or next(name for name in VECTOR_NAMES if name.encode() in stored)
    if name.encode() not in stored:
        raise JobConflict(f"this result has no {name!r} vector (the spec's output options "
                          f"left it out); available: {sorted(k.decode() for k in stored)}")
    return stored[name.encode()]


def _not_succeeded(current: JobView) -> str:
    if current.status in TERMINAL:
        return f"job {current.id} {current.status}" + (f": {current.error}" if current.error
                                                        else "") + "; it has no result"
    return (f"job {current.id} is {current.status}; the result exists once it has succeeded "
            f"(follow {current.links.events})")
