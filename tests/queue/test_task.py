"""The RQ task: a job solved in process by a real RQ worker streams its events and stores its
Result; failures and dead work horses end the job with a message saying what happened."""

from __future__ import annotations

import io
import os
import signal

import numpy as np
import pytest
from rq import SimpleWorker
from rq.exceptions import AbandonedJobError
from rq.timeouts import JobTimeoutException

from tests.queue.jobs import stream, submitted
from worker.errors import SpecError
from worker.queue.events import finish
from worker.queue.keys import RESULT, SERIALIZER, job_queue, key
from worker.queue.records import job_record, load_job, stored_result, stored_vectors
from worker.queue.state import JobState
from worker.queue.task import (
    FINISH_ALLOWANCE_S,
    failure_message,
    hard_timeout,
    horse_killed,
    npy_bytes,
)
from worker.result import Result


def work_in_process(connection) -> None:
    """Run every queued job in this process (RQ's worker without forking), then return."""
    SimpleWorker([job_queue(connection)], connection=connection,
                 serializer=SERIALIZER).work(burst=True)


def npy_values(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def test_a_job_streams_its_progress_and_stores_its_result_and_vectors(connection):
    job_id = submitted(connection, iterations=20000)
    work_in_process(connection)
    events = stream(connection, job_id)
    result = Result.model_validate_json(stored_result(connection, job_id))
    vectors = stored_vectors(connection, job_id)

    record = job_record(connection, "alpha", job_id)
    assert record.status == JobState.SUCCEEDED and record.algorithm == result.algorithm != "auto"
    assert [name for name, _ in events[:2]] == ["status", "status"]
    assert [data["status"] for _, data in events[:2]] == ["queued", "running"]
    assert {name for name, _ in events[2:-1]} == {"progress"}
    assert events[-1] == ("result", {"status": "succeeded", "algorithm": result.algorithm,
                                     "sizes": result.sizes.model_dump(),
                                     "expected": result.expected.model_dump(),
                                     "summary": result.summary().model_dump()})
    assert record.summary == result.summary().model_dump()
    np.testing.assert_array_equal(npy_values(vectors["mean"]), result.mean.solution)
    np.testing.assert_array_equal(npy_values(vectors["projected"]), result.projected.solution)
    np.testing.assert_array_equal(npy_values(vectors["mixture"]),
                                  [member.solution for member in result.mixture])


def test_a_job_cancelled_while_it_waited_never_runs(connection):
    job_id = submitted(connection)
    finish(connection, load_job(connection, "alpha", job_id), JobState.CANCELLED)
    work_in_process(connection)
    assert [data["status"] for _, data in stream(connection, job_id)] == ["queued", "cancelled"]
    assert connection.get(key(RESULT, job_id)) is None


def test_npy_bytes_are_a_float64_npy_file_of_the_values():
    for values in ([1, 2.5, -3], [[0.25, 1.0], [2.0, -1.5]]):
        loaded = npy_values(npy_bytes(values))
        assert loaded.dtype == np.float64
        np.testing.assert_array_equal(loaded, np.asarray(values, dtype=np.float64))


def test_the_hard_timeout_allows_for_loading_shrinking_and_projecting():
    assert hard_timeout(10.0) == 10 + FINISH_ALLOWANCE_S
    assert hard_timeout(10.2) == 11 + FINISH_ALLOWANCE_S


@pytest.mark.parametrize(("error", "says"), [
    (SpecError.at("dimension", "must be positive"), "dimension: must be positive"),
    (JobTimeoutException("late"), "ran longer than its limit"),
    (AbandonedJobError(), "stopped sending heartbeats"),
    (ZeroDivisionError("division by zero"), "internal error (ZeroDivisionError: division"),
])
def test_failure_messages_say_what_happened(connection, error, says):
    job = load_job(connection, "alpha", submitted(connection))
    message = failure_message(job, type(error), error)
    assert says in message
    if isinstance(error, ZeroDivisionError):
        assert job.id in message


def ended_child(how: str) -> tuple[int, int, object]:
    """Fork a child that kills itself (``"kill"``) or exits 3; its pid, wait status, rusage."""
    pid = os.fork()
    if pid == 0:
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3)
    _, status, rusage = os.wait4(pid, 0)
    return pid, status, rusage


@pytest.mark.parametrize(("how", "says"), [("kill", "killed by SIGKILL"),
                                           ("exit", "ended with exit status 3")])
def test_a_dead_work_horse_fails_its_job_saying_how_it_died(connection, how, says):
    job = load_job(connection, "alpha", submitted(connection))
    horse_killed(job, *ended_child(how))
    record = job_record(connection, "alpha", job.id)
    assert record.status == JobState.FAILED
    assert says in record.error and "peak memory" in record.error
    assert stream(connection, job.id)[-1] == ("status", {"status": "failed",
                                                         "error": record.error})
