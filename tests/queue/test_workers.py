"""Workers: liveness from heartbeats, the heartbeat bound, and reaping jobs of dead workers."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from redis import Redis
from rq.executions import Execution
from rq.job import JobStatus
from rq.utils import utcformat

from tests.local_stack import RedisServer
from tests.queue.jobs import stream, submitted
from worker.queue.keys import REAPER_GRACE_KEY, REAPER_LOCK_KEY, SERIALIZER, job_queue
from worker.queue.records import job_record, load_job
from worker.queue.state import JobState
from worker.queue.workers import MISSED_HEARTBEATS, LightTouchWorker, live_workers, reap_abandoned

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


def test_the_worker_wakes_once_per_heartbeat_and_a_job_outlives_missed_beats(connection):
    worker = registered_worker(connection)
    job = load_job(connection, "alpha", submitted(connection))
    assert worker.dequeue_timeout == HEARTBEAT_S
    assert worker.get_heartbeat_ttl(job) == MISSED_HEARTBEATS * HEARTBEAT_S


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
