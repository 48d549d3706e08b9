"""A job's stream: events until its one terminal event, nothing after it; what ending records."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

from tests.queue.jobs import REPORT, stream, submitted
from worker.queue import keys
from worker.queue.events import StoredResult, append_unless_ended, finish, json_text
from worker.queue.records import load_job
from worker.queue.state import JobState


def test_nothing_is_appended_after_the_terminal_event(connection):
    job_id = submitted(connection)
    job = load_job(connection, "alpha", job_id)
    appended = append_unless_ended(connection, job_id, "progress", REPORT, 600,
                                   latest_progress=True)
    ended = finish(connection, job, JobState.CANCELLED)
    late_progress = append_unless_ended(connection, job_id, "progress",
                                        dict(REPORT, iteration=2), 600, latest_progress=True)
    late_status = append_unless_ended(connection, job_id, "status", {"status": "running"}, 600)
    ended_again = finish(connection, job, JobState.FAILED, error="too late")

    assert (appended, ended, late_progress, late_status, ended_again) == (
        True, True, False, False, False)
    assert [event for event, _ in stream(connection, job_id)] == ["status", "progress", "status"]
    assert stream(connection, job_id)[-1][1] == {"status": "cancelled", "error": None}
    assert json.loads(connection.get(keys.key(keys.PROGRESS, job_id))) == REPORT
    assert json.loads(connection.get(keys.key(keys.OUTCOME, job_id)))["status"] == "cancelled"


def test_ending_frees_the_slot_counts_the_job_and_sets_every_record_to_expire(connection):
    job_id = submitted(connection)
    job = load_job(connection, "alpha", job_id)
    job.started_at = datetime.now(UTC) - timedelta(seconds=7)
    append_unless_ended(connection, job_id, "progress", REPORT, 10**6, latest_progress=True)
    finish(connection, job, JobState.SUCCEEDED, event=("result", {"status": "succeeded"}))
    metrics = {name.decode(): float(value)
               for name, value in connection.hgetall(keys.METRICS_KEY).items()}

    assert stream(connection, job_id)[-1] == ("result", {"status": "succeeded"})
    assert not connection.sismember(keys.key(keys.ACTIVE, "alpha"), job_id)
    assert metrics["ended:succeeded"] == 1 and metrics["duration_bucket:10.0"] == 1
    assert 7 <= metrics["duration_sum"] < 60
    for kind in (keys.SPEC, keys.EVENTS, keys.PROGRESS, keys.OUTCOME):
        assert 0 < connection.ttl(keys.key(kind, job_id)) <= job.result_ttl, kind


def test_event_payloads_are_strict_json_with_non_finite_numbers_as_null():
    text = json_text({"objective": math.nan, "nested": {"violation": -math.inf, "n": 3},
                      "gap": 0.5})
    assert json.loads(text) == {"objective": None, "nested": {"violation": None, "n": 3},
                                "gap": 0.5}


def test_a_result_arriving_after_the_job_ended_is_not_stored(connection):
    job_id = submitted(connection)
    job = load_job(connection, "alpha", job_id)
    failed = finish(connection, job, JobState.FAILED, error="the worker stopped heartbeating")
    late = finish(connection, job, JobState.SUCCEEDED, event=("result", {"status": "succeeded"}),
                  stored=StoredResult('{"status": "succeeded"}', {"mean": b"npy"}, {}))

    assert (failed, late) == (True, False)
    assert not connection.exists(keys.key(keys.RESULT, job_id), keys.key(keys.VECTORS, job_id))
    assert [event for event, _ in stream(connection, job_id)] == ["status", "status"]
    assert json.loads(connection.get(keys.key(keys.OUTCOME, job_id)))["status"] == "failed"


def test_the_first_finisher_stores_its_result_with_its_outcome(connection):
    job_id = submitted(connection)
    job = load_job(connection, "alpha", job_id)
    stored = finish(connection, job, JobState.SUCCEEDED, event=("result", {"status": "x"}),
                    stored=StoredResult('{"status": "succeeded"}', {"mean": b"npy"}, {}))
    cancelled = finish(connection, job, JobState.CANCELLED)

    assert (stored, cancelled) == (True, False)
    assert connection.get(keys.key(keys.RESULT, job_id)) == b'{"status": "succeeded"}'
    assert connection.hgetall(keys.key(keys.VECTORS, job_id)) == {b"mean": b"npy"}
    assert 0 < connection.ttl(keys.key(keys.RESULT, job_id)) <= job.result_ttl
