"""A job's states as the API reports them, how RQ's job statuses map onto them, and which
event of a job's stream is its last."""

from __future__ import annotations

import json
from enum import StrEnum

from rq.job import JobStatus


class JobState(StrEnum):
    """A job's status as the API reports it."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})

RQ_STATES = {
    JobStatus.CREATED: JobState.QUEUED, JobStatus.QUEUED: JobState.QUEUED,
    JobStatus.DEFERRED: JobState.QUEUED, JobStatus.SCHEDULED: JobState.QUEUED,
    JobStatus.STARTED: JobState.RUNNING, JobStatus.FINISHED: JobState.SUCCEEDED,
    JobStatus.FAILED: JobState.FAILED, JobStatus.STOPPED: JobState.CANCELLED,
    JobStatus.CANCELED: JobState.CANCELLED,
}


def rq_state(status: str) -> JobState:
    """The API status of an RQ job status (``started`` → ``running``, ...); unknown ones are
    ``queued``."""
    return RQ_STATES.get(status, JobState.QUEUED)


def is_terminal_event(event: str, data: str) -> bool:
    """Whether a job's event (name, JSON data) is its last: a ``result``, or a ``status``
    whose status is final."""
    return event == "result" or (event == "status" and json.loads(data)["status"] in TERMINAL)
