"""Admitting jobs: the records a submission writes, the tenant's cap, idempotent replays."""

from __future__ import annotations

import json

import pytest
from rq.job import Job

from tests.local_stack import small_spec
from tests.queue.jobs import ADMISSION, stream, submitted
from worker.errors import JobConflict, TooManyJobs
from worker.queue.events import finish
from worker.queue.keys import ACTIVE, JOBS, SERIALIZER, SPEC, job_queue, key
from worker.queue.state import JobState
from worker.queue.submit import BUSY_RETRY_AFTER_S, Admission, submit_job
from worker.queue.task import hard_timeout
from worker.spec.models import parse_spec


def test_a_submission_queues_the_job_with_its_spec_stream_and_index_entry(connection):
    job_id = submitted(connection, "alpha", seed=7)
    job = Job.fetch(job_id, connection=connection, serializer=SERIALIZER)

    assert job_queue(connection).job_ids == [job_id]
    assert job.meta == {"tenant": "alpha", "name": None, "algorithm": "fulltouch"}
    assert json.loads(connection.get(key(SPEC, job_id))) == small_spec(seed=7)
    assert stream(connection, job_id) == [("status", {"status": "queued"})]
    assert connection.zrange(key(JOBS, "alpha"), 0, -1) == [job_id.encode()]
    assert connection.smembers(key(ACTIVE, "alpha")) == {job_id.encode()}
    assert job.result_ttl == ADMISSION.result_ttl_s


def test_the_service_caps_the_solver_time_limit_and_the_hard_timeout_follows(connection):
    capped = Admission(max_active_jobs=3, job_timeout_s=10.0, result_ttl_s=600,
                       max_job_bytes=2**30)
    short = submitted(connection, admission=capped, time_limit_s=600)
    shorter = submitted(connection, admission=capped, time_limit_s=2.5)
    jobs = {job_id: Job.fetch(job_id, connection=connection, serializer=SERIALIZER)
            for job_id in (short, shorter)}

    assert jobs[short].args == [10.0, 2**30] and jobs[short].timeout == hard_timeout(10.0)
    assert jobs[shorter].args == [2.5, 2**30] and jobs[shorter].timeout == hard_timeout(2.5)


def test_a_tenant_at_its_cap_is_refused_until_a_job_ends(connection):
    jobs = [submitted(connection, "beta", seed=seed) for seed in range(3)]
    with pytest.raises(TooManyJobs, match="3 queued or running") as refused:
        submitted(connection, "beta")
    other_tenant = submitted(connection, "gamma")
    finish(connection, Job.fetch(jobs[0], connection=connection, serializer=SERIALIZER),
           JobState.CANCELLED)
    admitted = submitted(connection, "beta")

    assert refused.value.limit == 3 and refused.value.retry_after_s == BUSY_RETRY_AFTER_S
    assert len(job_queue(connection).job_ids) == 5 and other_tenant and admitted
    assert connection.scard(key(ACTIVE, "beta")) == 3


def test_a_slot_held_by_a_vanished_job_is_reclaimed(connection):
    connection.sadd(key(ACTIVE, "beta"), "0" * 32)   # a job that ended without finish()
    jobs = [submitted(connection, "beta", seed=seed) for seed in range(3)]
    assert connection.smembers(key(ACTIVE, "beta")) == {job.encode() for job in jobs}


def test_a_repeated_idempotency_key_replays_the_first_job_and_queues_nothing(connection):
    text = json.dumps(small_spec())
    spec = parse_spec(json.loads(text))
    first = submit_job(connection, ADMISSION, "alpha", spec, text, "order-7")
    again = submit_job(connection, ADMISSION, "alpha", spec, text, "order-7")
    other_tenant = submit_job(connection, ADMISSION, "beta", spec, text, "order-7")
    different = json.dumps(small_spec(seed=2))
    with pytest.raises(JobConflict, match="different body"):
        submit_job(connection, ADMISSION, "alpha", parse_spec(json.loads(different)), different,
                   "order-7")

    assert first == (first[0], False) and again == (first[0], True)
    assert other_tenant[1] is False and other_tenant[0] != first[0]
    assert job_queue(connection).job_ids == [first[0], other_tenant[0]]
    assert connection.zcard(key(JOBS, "alpha")) == 1
