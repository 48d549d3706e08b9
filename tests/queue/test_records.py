"""Reading a tenant's jobs: one job, pages of the newest, stored results."""

from __future__ import annotations

import pytest
from rq.job import Job, JobStatus

from tests.queue.jobs import REPORT, submitted
from worker.errors import JobNotFound
from worker.queue.events import StoredResult, append_unless_ended, finish
from worker.queue.keys import JOBS, SERIALIZER, key
from worker.queue.records import (
    JobFilter,
    job_page,
    job_record,
    load_job,
    stored_result,
    stored_vectors,
)
from worker.queue.state import JobState
from worker.queue.submit import Admission


def test_a_job_is_found_only_by_its_own_tenant(connection):
    job_id = submitted(connection, "alpha")
    assert load_job(connection, "alpha", job_id).id == job_id
    for tenant, wanted in (("beta", job_id), ("alpha", "0" * 32), ("alpha", "not-an-id")):
        with pytest.raises(JobNotFound, match="LIGHTTOUCH_RESULT_TTL_S"):
            load_job(connection, tenant, wanted)


def test_a_record_carries_the_latest_progress_then_the_outcome(connection):
    job_id = submitted(connection)
    queued = job_record(connection, "alpha", job_id)
    append_unless_ended(connection, job_id, "progress", REPORT, 600, latest_progress=True)
    reporting = job_record(connection, "alpha", job_id)
    finish(connection, load_job(connection, "alpha", job_id), JobState.FAILED, error="broke")
    failed = job_record(connection, "alpha", job_id)

    assert queued.status == JobState.QUEUED and queued.progress is None
    assert queued.created_at is not None and queued.ended_at is None and queued.error is None
    assert reporting.progress == REPORT
    assert failed.status == JobState.FAILED and failed.error == "broke"
    assert failed.ended_at is not None and failed.summary is None
    assert (failed.progress, failed.last_progress) == (None, REPORT)   # history once ended


def test_a_succeeded_record_reads_its_results_summary_not_its_last_progress(connection):
    job_id = submitted(connection)
    append_unless_ended(connection, job_id, "progress", REPORT, 600, latest_progress=True)
    summary = {"objective": 0.25, "max_violation": 3.5e-10, "relative_gap": None, "members": 2,
               "feasibility": {"feasible": True, "tolerance": 1e-3}}
    finish(connection, load_job(connection, "alpha", job_id), JobState.SUCCEEDED,
           stored=StoredResult("{}", {"mean": b"npy"}, summary))
    record = job_record(connection, "alpha", job_id)

    assert record.status == JobState.SUCCEEDED and record.summary == summary
    assert (record.progress, record.last_progress) == (None, REPORT)


def test_a_job_failed_outside_the_handlers_says_where_to_look(connection):
    job_id = submitted(connection)
    load_job(connection, "alpha", job_id).set_status(JobStatus.FAILED)
    record = job_record(connection, "alpha", job_id)
    assert record.status == JobState.FAILED and "worker log" in record.error


def test_pages_are_newest_first_and_drop_expired_jobs(connection):
    jobs = [submitted(connection, "alpha", seed=seed) for seed in range(3)]
    first, more = job_page(connection, "alpha", 0, 2)
    last, no_more = job_page(connection, "alpha", 2, 2)
    Job.fetch(jobs[1], connection=connection, serializer=SERIALIZER).delete()
    after_expiry, _ = job_page(connection, "alpha", 0, 5)

    assert [record.id for record in first] == jobs[:0:-1] and more
    assert [record.id for record in last] == jobs[:1] and not no_more
    assert [record.id for record in after_expiry] == [jobs[2], jobs[0]]
    assert connection.zcard(key(JOBS, "alpha")) == 2
    assert job_page(connection, "beta", 0, 5) == ([], False)


def test_filtered_pages_count_only_the_jobs_they_admit(connection):
    roomy = Admission(max_active_jobs=10, job_timeout_s=3600.0, result_ttl_s=600)
    jobs = [submitted(connection, "alpha", roomy, seed=seed) for seed in range(5)]
    for job_id in jobs[1::2]:
        finish(connection, load_job(connection, "alpha", job_id), JobState.CANCELLED)
    Job.fetch(jobs[2], connection=connection, serializer=SERIALIZER).delete()
    queued = JobFilter(status=JobState.QUEUED)
    first, more = job_page(connection, "alpha", 0, 1, queued)
    last, no_more = job_page(connection, "alpha", 1, 1, queued)
    cancelled, _ = job_page(connection, "alpha", 0, 5, JobFilter(JobState.CANCELLED,
                                                                 "fulltouch"))

    assert [record.id for record in first] == [jobs[4]] and more
    assert [record.id for record in last] == [jobs[0]] and not no_more
    assert [record.id for record in cancelled] == [jobs[3], jobs[1]]
    assert job_page(connection, "alpha", 0, 5, JobFilter(algorithm="lighttouch")) == ([], False)


def test_results_that_were_never_stored_or_expired_are_not_found(connection):
    job_id = submitted(connection)
    with pytest.raises(JobNotFound):
        stored_result(connection, job_id)
    with pytest.raises(JobNotFound):
        stored_vectors(connection, job_id)

