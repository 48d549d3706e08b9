"""Cancelling: a queued job leaves the queue and ends ``cancelled`` once; an ended one stays."""

from __future__ import annotations

import pytest

from tests.queue.jobs import stream, submitted
from worker.errors import JobConflict, JobNotFound
from worker.queue.cancel import cancel_job
from worker.queue.events import finish
from worker.queue.keys import ACTIVE, job_queue, key
from worker.queue.records import load_job
from worker.queue.state import JobState


def test_cancelling_a_queued_job_takes_it_off_the_queue_once(connection):
    job_id, waiting = submitted(connection, seed=1), submitted(connection, seed=2)
    first = cancel_job(connection, "alpha", job_id)
    second = cancel_job(connection, "alpha", job_id)

    assert first.status == second.status == JobState.CANCELLED and first.error is None
    assert job_queue(connection).job_ids == [waiting]
    assert stream(connection, job_id) == [("status", {"status": "queued"}),
                                          ("status", {"status": "cancelled", "error": None})]
    assert connection.smembers(key(ACTIVE, "alpha")) == {waiting.encode()}
    assert 0 < connection.ttl(load_job(connection, "alpha", job_id).key) <= 600


def test_an_ended_job_cannot_be_cancelled_and_another_tenant_cannot_see_it(connection):
    job_id = submitted(connection)
    finish(connection, load_job(connection, "alpha", job_id), JobState.SUCCEEDED)
    with pytest.raises(JobConflict, match="already ended: succeeded"):
        cancel_job(connection, "alpha", job_id)
    with pytest.raises(JobNotFound):
        cancel_job(connection, "beta", submitted(connection))
