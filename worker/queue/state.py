"""A job's states as the API reports them."""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    """A job's status as the API reports it."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})
