"""The queue workers: the fork-per-job RQ worker, its warm-up, liveness and the reaper of
jobs whose worker died."""

from __future__ import annotations

import logging
import os
import time

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker
from rq.executions import Execution
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.timeouts import TimerDeathPenalty

from worker.queue.keys import (
    QUEUE_NAME,
    REAPER_GRACE_KEY,
    REAPER_LOCK_KEY,
    REDIS_RUN_KEY,
    SERIALIZER,
    job_queue,
)
from worker.queue.lifetime import die_with_parent
from worker.queue.task import horse_killed
from worker.queue.warm_up import warm_up

log = logging.getLogger(__name__)

#: Renewals a worker may miss before its job counts as abandoned.
MISSED_HEARTBEATS = 3


def reap_abandoned(connection: Redis, period_s: int) -> None:
    """Fail jobs whose worker stopped heartbeating; at most once per ``period_s`` across callers.

    Not within ``(MISSED_HEARTBEATS + 1) * period_s`` of a Redis restart: heartbeats expire
    while Redis is down, and live workers need a heartbeat after it is back to renew them.
    """
    if _restarted_recently(connection, (MISSED_HEARTBEATS + 1) * period_s):
        return
    if connection.set(REAPER_LOCK_KEY, 1, nx=True, ex=period_s):
        StartedJobRegistry(QUEUE_NAME, connection, serializer=SERIALIZER,
                           death_penalty_class=TimerDeathPenalty).cleanup()


def _restarted_recently(connection: Redis, grace_s: int) -> bool:
    """Whether Redis restarted (with its data) less than ``grace_s`` seconds ago, as told
    by a change of its ``run_id`` since the last call."""
    run_id = connection.info("server")["run_id"]
    previous = connection.set(REDIS_RUN_KEY, run_id, get=True)
    if previous is not None and previous.decode() != run_id:
        connection.set(REAPER_GRACE_KEY, 1, ex=grace_s)
    return bool(connection.exists(REAPER_GRACE_KEY))


def live_workers(connection: Redis, heartbeat_s: int) -> int:
    """Workers on the queue whose last heartbeat is recent (within the missed-heartbeat bound)."""
    cutoff = time.time() - MISSED_HEARTBEATS * heartbeat_s
    return sum(1 for worker in Worker.all(queue=job_queue(connection))
               if worker.last_heartbeat is not None and worker.last_heartbeat.timestamp() >= cutoff)


class LightTouchWorker(Worker):
    """RQ's fork-per-job worker, heartbeating every ``job_monitoring_interval`` seconds,
    whose work horses die with it (:func:`~worker.queue.lifetime.die_with_parent`)."""

    def fork_work_horse(self, job: Job, queue: Queue) -> None:
        """Fork the horse, telling it which process is its parent."""
        self._parent_pid = os.getpid()
        super().fork_work_horse(job, queue)

    def main_work_horse(self, job: Job, queue: Queue) -> None:
        """In the horse: tie its life to the worker's, then run the job."""
        die_with_parent(self._parent_pid)
        super().main_work_horse(job, queue)

    @property
    def dequeue_timeout(self) -> int:
        """Wake from an idle wait once per heartbeat to renew this worker's registration."""
        return self.job_monitoring_interval

    def maintain_heartbeats(self, job: Job, execution: Execution) -> None:
        """Renew the heartbeats; if Redis stays away past the connection's retries, log it
        and keep watching the horse (RQ would quit, abandoning the running job)."""
        try:
            super().maintain_heartbeats(job, execution)
        except RedisError as error:
            log.warning("heartbeat of job %s failed (%s); retrying at the next one", job.id,
                        error)

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        """A running job counts as abandoned after ``MISSED_HEARTBEATS`` missed renewals."""
        return self.job_monitoring_interval * MISSED_HEARTBEATS


def run_worker(connection: Redis, *, heartbeat_s: int, burst: bool = False) -> bool:
    """Warm up, then work on the queue until stopped (or until it is empty, with ``burst``)."""
    warm_up()
    worker = LightTouchWorker([job_queue(connection)], connection=connection,
                              serializer=SERIALIZER, job_monitoring_interval=heartbeat_s,
                              work_horse_killed_handler=horse_killed)
    return worker.work(burst=burst, logging_level="INFO")
