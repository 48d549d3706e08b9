"""Workers: liveness from heartbeats, the announced warm-up, the heartbeat bound, and reaping
jobs of dead workers."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from redis import Redis
from rq.executions import Execution
from rq.job import JobStatus
from rq.utils import utcformat

from tests.local_stack import RedisServer
from tests.queue.jobs import stream, submitted
from worker.errors import DataError
from worker.queue.keys import (
    REAPER_GRACE_KEY,
    REAPER_LOCK_KEY,
    SERIALIZER,
    WARMING_KEY,
    job_queue,
)
from worker.queue.records import job_record, load_job
from worker.queue.state import JobState
from worker.queue.workers import (
    MISSED_HEARTBEATS,
    LightTouchWorker,
    announce_warming,
    live_workers,
    reap_abandoned,
    warming_workers,
)

HEARTBEAT_S = 2


def registered_worker(connection) -> LightTouchWorker:
    """A worker registered on the queue, as ``lighttouch worker`` registers before working."""
    worker = LightTouchWorker([job_queue(connection)], connection=connection,
                              serializer=SERIALIZER, job_monitoring_interval=HEARTBEAT_S)
    worker.register_birth()
    return worker


def test_a_worker_counts_as_live_until_it_misses_its_heartbeats(connection):
    assert live_workers(connection, HEARTBEAT_S) == 0
    worker = registered_worker(connection)
    live = live_workers(connection, HEARTBEAT_S)
    silent_for = timedelta(seconds=MISSED_HEARTBEATS * HEARTBEAT_S + 1)
    connection.hset(worker.key, "last_heartbeat", utcformat(datetime.now(UTC) - silent_for))
    assert (live, live_workers(connection, HEARTBEAT_S)) == (1, 0)


def test_a_warm_up_is_announced_while_it_runs_and_lapses_if_its_worker_dies(connection):
    with announce_warming(connection, "starting", HEARTBEAT_S):
        during = warming_workers(connection)
    # a worker killed mid warm-up leaves its announcement, which lapses unrenewed
    connection.zadd(WARMING_KEY, {"killed": time.time() - 1})
    assert (during, warming_workers(connection)) == (1, 0)
    assert connection.zscore(WARMING_KEY, "starting") is None


def test_the_worker_wakes_once_per_heartbeat_and_a_job_outlives_missed_beats(connection):
    worker = registered_worker(connection)
    job = load_job(connection, "alpha", submitted(connection))
    assert worker.dequeue_timeout == HEARTBEAT_S
    assert worker.get_heartbeat_ttl(job) == MISSED_HEARTBEATS * HEARTBEAT_S


def failure_logged(connection, error: Exception, caplog) -> str:
    """What the worker logs when a job raises ``error`` (the job failed as RQ fails it)."""
    worker = registered_worker(connection)
    job = load_job(connection, "alpha", submitted(connection))
    try:
        raise error
    except type(error) as raised:
        caplog.clear()
        worker.handle_exception(job, type(raised), raised, raised.__traceback__)
    return caplog.text


def test_a_wrong_spec_is_one_line_of_the_log_an_unexpected_error_its_traceback(connection,
                                                                                  caplog):
    wrong = failure_logged(connection, DataError("objective.data.features", "no such file"),
                           caplog)
    unexpected = failure_logged(connection, ZeroDivisionError("division by zero"), caplog)
    assert wrong.count("\n") == 1 and "objective.data.features: no such file" in wrong
    assert "Traceback" in unexpected and "ZeroDivisionError: division by zero" in unexpected


def abandon(connection, job_id: str) -> None:
    """Mark the job started by a worker whose heartbeat has already lapsed."""
    job = load_job(connection, "alpha", job_id)
    with connection.pipeline() as pipe:
        Execution.create(job, ttl=0, pipeline=pipe)
        job.set_status(JobStatus.STARTED, pipeline=pipe)
        pipe.execute()
    time.sleep(0.01)


def test_a_job_whose_worker_stopped_heartbeating_is_failed_once_per_period(connection):
    first, second = submitted(connection, seed=1), submitted(connection, seed=2)
    abandon(connection, first)
    reap_abandoned(connection, 60)
    abandon(connection, second)
    reap_abandoned(connection, 60)   # within the period: another caller's turn
    waited = job_record(connection, "alpha", second).status
    connection.delete(REAPER_LOCK_KEY)   # the period has passed
    reap_abandoned(connection, 60)

    failed = job_record(connection, "alpha", first)
    assert failed.status == JobState.FAILED and "stopped sending heartbeats" in failed.error
    assert stream(connection, first)[-1][1]["status"] == "failed"
    assert waited == JobState.RUNNING
    assert job_record(connection, "alpha", second).status == JobState.FAILED


def test_after_a_redis_restart_the_reaper_waits_for_live_workers_to_renew():
    server = RedisServer(persistent=True)
    try:
        with Redis.from_url(server.url(0)) as connection:
            reap_abandoned(connection, 60)                 # sees this server's run id
            connection.delete(REAPER_LOCK_KEY)
            job_id = submitted(connection)
            abandon(connection, job_id)
        server.restart("shutdown")
        with Redis.from_url(server.url(0)) as connection:
            reap_abandoned(connection, 60)                 # restarted: heartbeats may lapse
            spared = job_record(connection, "alpha", job_id).status
            connection.delete(REAPER_GRACE_KEY)            # the grace period has passed
            reap_abandoned(connection, 60)
            failed = job_record(connection, "alpha", job_id).status
    finally:
        server.stop()
    assert (spared, failed) == (JobState.RUNNING, JobState.FAILED)
