"""Job states: RQ's statuses as the API's, and which event ends a job's stream."""

from __future__ import annotations

import json

import pytest
from rq.job import JobStatus

from worker.queue.state import JobState, is_terminal_event, rq_state


@pytest.mark.parametrize(("status", "state"), [
    (JobStatus.QUEUED, JobState.QUEUED), (JobStatus.DEFERRED, JobState.QUEUED),
    (JobStatus.STARTED, JobState.RUNNING), (JobStatus.FINISHED, JobState.SUCCEEDED),
    (JobStatus.FAILED, JobState.FAILED), (JobStatus.STOPPED, JobState.CANCELLED),
    (JobStatus.CANCELED, JobState.CANCELLED), ("something new", JobState.QUEUED),
])
def test_rq_statuses_map_onto_the_api_states(status, state):
    assert rq_state(status) == state


@pytest.mark.parametrize(("event", "data", "last"), [
    ("result", {"status": "succeeded", "algorithm": "fulltouch"}, True),
    ("status", {"status": "failed", "error": "killed"}, True),
    ("status", {"status": "cancelled", "error": None}, True),
    ("status", {"status": "running"}, False),
    ("status", {"status": "queued"}, False),
    ("progress", {"iteration": 5, "iterations": 10}, False),
])
def test_only_a_result_or_a_final_status_ends_the_stream(event, data, last):
    assert is_terminal_event(event, json.dumps(data)) is last
