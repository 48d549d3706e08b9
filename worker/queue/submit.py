"""Admitting a job: the tenant's cap on active jobs, ``Idempotency-Key`` replays, and the
RQ job with its records, queued in one transaction."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass

from redis import Redis, WatchError
from redis.client import Pipeline
from rq import Callback, Queue
from rq.job import Job

from worker.errors import JobConflict, TooManyJobs
from worker.pipeline.memory import check_memory, declared_parts
from worker.queue.events import publish
from worker.queue.keys import ACTIVE, JOBS, OUTCOME, SPEC, idempotency_key, job_queue, key
from worker.queue.state import JobState
from worker.queue.task import hard_timeout, job_failed, run_job
from worker.queue.warm import check_warm_start
from worker.spec.models import Spec

#: Newest jobs kept in a tenant's listing index.
MAX_LISTED_JOBS = 10_000
#: Seconds after which a tenant at its cap may try again: a guess at when a slot frees up.
BUSY_RETRY_AFTER_S = 10


@dataclass(frozen=True)
class Admission:
    """What a submission may ask for.

    Attributes
    ----------
    max_active_jobs : int
        The tenant's cap on queued and running jobs.
    job_timeout_s : float
        Cap on a job's solver time limit (the spec's own limit applies when smaller).
    result_ttl_s : int
        Seconds a job's records, result and idempotency record are kept once it ends.
    max_job_bytes : int or None
        The per-job memory budget, checked on the spec here and on the compiled problem by
        the work horse (None: none).
    """

    max_active_jobs: int
    job_timeout_s: float
    result_ttl_s: int
    max_job_bytes: int | None = None


def submit_job(connection: Redis, admission: Admission, tenant: str, spec: Spec, text: str,
               idempotency: str | None) -> tuple[str, bool]:
    """Queue ``spec`` (``text`` as submitted) for ``tenant``.

    Returns the job id and whether it is a replay: a repeated ``idempotency`` key with the
    same ``text`` gives the first submission's id and queues nothing. Raises
    :class:`~worker.errors.SpecError` when the spec alone shows the job over the memory
    budget, :class:`~worker.errors.TooManyJobs` at the tenant's cap and
    :class:`~worker.errors.JobConflict` for a key reused with another text; a warm start
    from a job the tenant does not own (or without a result) is a ``SpecError``.
    """
    check_memory(declared_parts(spec), admission.max_job_bytes)
    check_warm_start(connection, tenant, spec)
    fingerprint = hashlib.sha256(text.encode()).hexdigest()
    job_id = uuid.uuid4().hex
    claim = idempotency_key(tenant, idempotency) if idempotency else None
    with connection.pipeline() as pipe:
        if claim:
            pipe.watch(claim)
            if (stored := pipe.get(claim)) is not None:
                return _replayed_id(stored, fingerprint), True
        _reserve_slot(connection, admission.max_active_jobs, tenant, job_id)
        try:
            pipe.multi()
            _enqueue(pipe, job_queue(connection), admission, tenant, spec, text, job_id)
            if claim:
                record = {"fingerprint": fingerprint, "job_id": job_id}
                pipe.set(claim, json.dumps(record), ex=admission.result_ttl_s)
            pipe.execute()
        except WatchError:   # the same key was submitted concurrently and won
            connection.srem(key(ACTIVE, tenant), job_id)
            return _replayed_id(connection.get(claim), fingerprint), True
        except BaseException:
            connection.srem(key(ACTIVE, tenant), job_id)
            raise
    return job_id, False


def _replayed_id(stored: bytes | None, fingerprint: str) -> str:
    """The job id of an idempotency record, if it was made for the same text."""
    record = json.loads(stored) if stored else None
    if record is None or record["fingerprint"] != fingerprint:
        raise JobConflict("this Idempotency-Key was already used with a different body; "
                          "use a new key for a different spec")
    return record["job_id"]


def _reserve_slot(connection: Redis, limit: int, tenant: str, job_id: str) -> None:
    """Count ``job_id`` against the tenant's cap on active jobs, or raise :class:`TooManyJobs`."""
    active = key(ACTIVE, tenant)
    with connection.pipeline(transaction=False) as pipe:
        pipe.sadd(active, job_id)
        pipe.scard(active)
        count = pipe.execute()[1]
    if count > limit and _prune_active(connection, active, job_id) > limit:
        connection.srem(active, job_id)
        raise TooManyJobs(limit, BUSY_RETRY_AFTER_S)


def _prune_active(connection: Redis, active: str, reserved: str) -> int:
    """Drop ended or vanished jobs (not the one just ``reserved``) from an active set; its size.

    This repairs the count should a job have ended without :func:`worker.queue.events.finish`.
    """
    members = [member.decode() for member in connection.smembers(active)
               if member.decode() != reserved]
    with connection.pipeline(transaction=False) as pipe:
        for job_id in members:
            pipe.exists(key(OUTCOME, job_id), Job.key_for(job_id))
        checks = pipe.execute()
    stale = [job_id for job_id, found in zip(members, checks, strict=True) if found != 1]
    if stale:
        connection.srem(active, *stale)
    return len(members) - len(stale) + 1


def _enqueue(pipe: Pipeline, queue: Queue, admission: Admission, tenant: str, spec: Spec,
             text: str, job_id: str) -> None:
    """Queue the RQ job and its records on ``pipe`` (inside the submit transaction)."""
    time_limit = min(spec.solver.time_limit_s, admission.job_timeout_s)
    timeout = hard_timeout(time_limit)
    queue.enqueue_call(
        run_job, args=(time_limit, admission.max_job_bytes), job_id=job_id, timeout=timeout,
        result_ttl=admission.result_ttl_s, failure_ttl=admission.result_ttl_s,
        description=f"solve {spec.name or job_id}", meta={"tenant": tenant, "name": spec.name,
                                                     "algorithm": spec.solver.algorithm},
        on_failure=Callback(job_failed), pipeline=pipe)
    pipe.set(key(SPEC, job_id), text)
    publish(pipe, job_id, "status", {"status": str(JobState.QUEUED)},
            timeout + admission.result_ttl_s)
    index = key(JOBS, tenant)
    pipe.zadd(index, {job_id: time.time()})
    pipe.zremrangebyrank(index, 0, -MAX_LISTED_JOBS - 1)
