"""The queue workers: the fork-per-job RQ worker, its announced warm-up, liveness and the
reaper of jobs whose worker died."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker
from rq.executions import Execution
from rq.job import Job
from rq.job_lifecycle import call_exception_handlers
from rq.registry import StartedJobRegistry
from rq.timeouts import TimerDeathPenalty

from worker.errors import LightTouchError
from worker.queue.keys import (
    QUEUE_NAME,
    REAPER_GRACE_KEY,
    REAPER_LOCK_KEY,
    REDIS_RUN_KEY,
    SERIALIZER,
    WARMING_KEY,
    job_queue,
)
from worker.queue.lifetime import die_with_parent
from worker.queue.task import horse_killed
from worker.queue.warm_up import announced_warm_up

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


def warming_workers(connection: Redis) -> int:
    """Workers that announced a warm-up (:func:`announce_warming`) not yet over or lapsed."""
    return connection.zcount(WARMING_KEY, f"({time.time()}", "+inf")


@contextmanager
def announce_warming(connection: Redis, name: str, heartbeat_s: int) -> Iterator[None]:
    """Announce worker ``name`` as warming up while the block runs: renewed every heartbeat
    from a thread (ended before the block returns, so nothing is left to break a fork), lapsing
    after ``MISSED_HEARTBEATS`` missed renewals if the process dies, withdrawn at the end."""
    done, announced = threading.Event(), threading.Event()

    def renew() -> None:
        while True:
            try:
                connection.zadd(WARMING_KEY, {name: time.time() + MISSED_HEARTBEATS * heartbeat_s})
                connection.zremrangebyscore(WARMING_KEY, "-inf", time.time())
            except RedisError as error:
                log.warning("announcing the warm-up failed (%s); retrying", error)
            announced.set()
            if done.wait(heartbeat_s):
                return

    renewer = threading.Thread(target=renew, name="announce-warming", daemon=True)
    renewer.start()
    announced.wait()          # the block runs announced, not racing the thread's first write
    try:
        yield
    finally:
        done.set()
        renewer.join()
        connection.zrem(WARMING_KEY, name)


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

    def handle_exception(self, job: Job, *exc_info) -> None:
        """Log a job's failure: one line when the spec or its data is wrong (a
        :class:`~worker.errors.LightTouchError`: nothing to debug), RQ's traceback otherwise."""
        if not issubclass(exc_info[0], LightTouchError):
            super().handle_exception(job, *exc_info)
            return
        log.warning("job %s failed: %s", job.id, exc_info[1])
        call_exception_handlers(self._exc_handlers, job, *exc_info)


def _log_to_stderr() -> None:
    """The ``worker`` package's INFO lines on stderr, as RQ writes its own (once)."""
    package = logging.getLogger("worker")
    if not package.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        package.addHandler(handler)
    package.setLevel(logging.INFO)


def run_worker(connection: Redis, *, heartbeat_s: int, burst: bool = False) -> bool:
    """Warm up (announced in the log and to ``/readyz``), then work on the queue until
    stopped (or until it is empty, with ``burst``)."""
    _log_to_stderr()
    worker = LightTouchWorker([job_queue(connection)], connection=connection,
                              serializer=SERIALIZER, job_monitoring_interval=heartbeat_s,
                              work_horse_killed_handler=horse_killed)
    with announce_warming(connection, worker.name, heartbeat_s):
        announced_warm_up(log.info)
    return worker.work(burst=burst, logging_level="INFO")
