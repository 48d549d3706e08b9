"""The queue side of the service: the RQ job that runs :func:`~worker.solve.solve` in a work horse.

A job is an RQ job on the ``lighttouch`` queue whose function is :func:`run_job`; a worker
forks one work horse per job (so stopping a job, even inside a numba loop, is killing a
process). Besides RQ's own ``rq:job:{id}`` hash (status, timestamps, ``meta.tenant``), a job
owns these keys, all expiring ``result_ttl`` seconds after it ends:

=============================  ===========================================================
key                            holds
=============================  ===========================================================
``lighttouch:spec:{id}``       the spec JSON as submitted (kept out of RQ's job hash)
``lighttouch:events:{id}``     Stream of events ``progress``, ``status``, ``result``, capped
``lighttouch:progress:{id}``   the latest progress event (JSON)
``lighttouch:outcome:{id}``    how the job ended (JSON), written exactly once by :func:`finish`
``lighttouch:result:{id}``     the Result JSON, serialized once by the work horse
``lighttouch:vectors:{id}``    hash of ``.npy`` bytes: ``mean``, ``projected``, ``mixture``
``lighttouch:active:{t}``      set of tenant ``t``'s jobs not yet ended (the API's cap)
=============================  ===========================================================

Every way a job ends goes through :func:`finish`: the work horse on success, RQ's failure
callback (exceptions, time limit, and abandoned jobs found by :func:`reap_abandoned`), the
worker parent when the horse dies (:func:`horse_killed`) and the API on cancel. A dead
worker is noticed through heartbeats: the worker parent renews the job's entry in RQ's
started-job registry every ``heartbeat_s`` seconds for ``MISSED_HEARTBEATS * heartbeat_s``;
the API reaps expired entries every ``heartbeat_s``, so a job whose worker died ends
``failed`` within ``(MISSED_HEARTBEATS + 1) * heartbeat_s``. Such a job is not retried: a
solve that killed its worker (out of memory, typically) would kill the next one too, and a
rerun would repeat its progress events on the same stream.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any

import numpy as np
from redis import Redis
from redis.client import Pipeline
from rq import Queue, Worker
from rq.exceptions import AbandonedJobError
from rq.job import Job, get_current_job
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer
from rq.timeouts import JobTimeoutException, TimerDeathPenalty

from worker.algorithms.loop import Progress
from worker.errors import LightTouchError
from worker.pipeline.solve import solve
from worker.result import Result
from worker.spec.models import ALGORITHMS, parse_spec

QUEUE_NAME = "lighttouch"
SERIALIZER = JSONSerializer
PREFIX = "lighttouch"
SPEC, EVENTS, PROGRESS, OUTCOME, RESULT, VECTORS, ACTIVE = (
    "spec", "events", "progress", "outcome", "result", "vectors", "active")
METRICS_KEY = f"{PREFIX}:metrics"
REAPER_LOCK_KEY = f"{PREFIX}:reaper"

#: Events kept per job stream (``XADD MAXLEN ~``): over an hour of progress at 4 per second.
STREAM_MAXLEN = 16_384
#: Renewals a worker may miss before its job counts as abandoned.
MISSED_HEARTBEATS = 3
#: Seconds a work horse may run past the solver's time limit (data loading, shrinking LP,
#: projection) before RQ kills it.
FINISH_ALLOWANCE_S = 60
#: Upper bounds (seconds) of the job-duration histogram buckets kept in Redis.
DURATION_BUCKETS_S = (1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, float("inf"))

class JobState(StrEnum):
    """A job's status as the API reports it."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})


def key(kind: str, name: str) -> str:
    """The Redis key of one of a job's (or tenant's) records, e.g. ``lighttouch:events:{id}``."""
    return f"{PREFIX}:{kind}:{name}"


def job_queue(connection: Redis) -> Queue:
    """The one queue every API and worker uses."""
    return Queue(QUEUE_NAME, connection=connection, serializer=SERIALIZER)


def hard_timeout(time_limit_s: float) -> int:
    """Seconds after which RQ kills a job whose solver was given ``time_limit_s``."""
    return int(np.ceil(time_limit_s)) + FINISH_ALLOWANCE_S


def publish(pipe: Pipeline, job_id: str, event: str, data: dict[str, Any], ttl: int) -> None:
    """Append one event to the job's stream (queued on ``pipe``) and extend the stream's life."""
    stream = key(EVENTS, job_id)
    pipe.xadd(stream, {"event": event, "data": json_text(data)}, maxlen=STREAM_MAXLEN,
              approximate=True)
    pipe.expire(stream, ttl)


def json_text(data: dict[str, Any]) -> str:
    """Strict JSON of an event payload: non-finite numbers (a diverging run) become null."""
    return json.dumps(_finite(data), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {name: _finite(item) for name, item in value.items()}
    return value


def finish(connection: Redis, job: Job, state: JobState, *, error: str | None = None,
           event: tuple[str, dict[str, Any]] | None = None) -> bool:
    """Record how ``job`` ended and publish its terminal event; False if it had already ended.

    The default event is ``status`` with ``{"status": state, "error": error}``.
    """
    ttl = job.result_ttl
    ended = time.time()
    outcome = {"status": str(state), "error": error, "ended_at": ended}
    if not connection.set(key(OUTCOME, job.id), json.dumps(outcome), nx=True, ex=ttl):
        return False
    name, data = event or ("status", {"status": str(state), "error": error})
    with connection.pipeline(transaction=False) as pipe:
        publish(pipe, job.id, name, data, ttl)
        pipe.expire(key(SPEC, job.id), ttl)
        pipe.expire(key(PROGRESS, job.id), ttl)
        pipe.srem(key(ACTIVE, job.meta.get("tenant", "")), job.id)
        pipe.hincrby(METRICS_KEY, f"ended:{state}", 1)
        if job.started_at is not None:
            _record_duration(pipe, ended - job.started_at.timestamp())
        pipe.execute()
    return True


def _record_duration(pipe: Pipeline, seconds: float) -> None:
    """Count one job duration in the Redis-held histogram (non-cumulative buckets)."""
    bucket = next(bound for bound in DURATION_BUCKETS_S if seconds <= bound)
    pipe.hincrby(METRICS_KEY, f"duration_bucket:{bucket}", 1)
    pipe.hincrbyfloat(METRICS_KEY, "duration_sum", seconds)


def run_job(time_limit_s: float) -> None:
    """The RQ job: solve the job's spec in this work horse, streaming progress, storing the result.

    ``time_limit_s`` replaces the spec's own limit when smaller (the service's job timeout).
    """
    job = get_current_job()
    connection = job.connection
    with connection.pipeline(transaction=False) as pipe:
        pipe.exists(key(OUTCOME, job.id))
        pipe.get(key(SPEC, job.id))
        ended, spec_json = pipe.execute()
    if ended:   # cancelled while it waited
        return
    running_ttl = job.timeout + job.result_ttl
    with connection.pipeline(transaction=False) as pipe:
        publish(pipe, job.id, "status", {"status": str(JobState.RUNNING)}, running_ttl)
        pipe.execute()
    spec = parse_spec(json.loads(spec_json))
    if time_limit_s < spec.solver.time_limit_s:
        spec = spec.model_copy(update={
            "solver": spec.solver.model_copy(update={"time_limit_s": time_limit_s})})
    result = solve(spec, progress=_progress_publisher(connection, job.id, running_ttl))
    _store_result(connection, job, result)


def _progress_publisher(connection: Redis, job_id: str, ttl: int) -> Callable[[Progress], None]:
    """The progress callback: each report becomes a ``progress`` event and the latest progress."""
    def publish_progress(progress: Progress) -> None:
        data = dataclasses.asdict(progress)
        with connection.pipeline(transaction=False) as pipe:
            publish(pipe, job_id, "progress", data, ttl)
            pipe.set(key(PROGRESS, job_id), json_text(data), ex=ttl)
            pipe.execute()
    return publish_progress


def _store_result(connection: Redis, job: Job, result: Result) -> None:
    """Store the Result JSON and its vectors as ``.npy``, then end the job ``succeeded``."""
    vectors = {"mean": npy_bytes(result.mean.solution)}
    if result.projected is not None:
        vectors["projected"] = npy_bytes(result.projected.solution)
    solutions = [member.solution for member in result.mixture if member.solution is not None]
    if solutions:
        vectors["mixture"] = npy_bytes(solutions)
    ttl = job.result_ttl
    with connection.pipeline(transaction=False) as pipe:
        pipe.set(key(RESULT, job.id), result.model_dump_json(), ex=ttl)
        pipe.hset(key(VECTORS, job.id), mapping=vectors)
        pipe.expire(key(VECTORS, job.id), ttl)
        pipe.execute()
    summary = {"status": str(JobState.SUCCEEDED), "algorithm": result.algorithm,
               "sizes": result.sizes.model_dump(), "expected": result.expected.model_dump()}
    finish(connection, job, JobState.SUCCEEDED, event=("result", summary))


def npy_bytes(values: list[float] | list[list[float]]) -> bytes:
    """``values`` as the bytes of a float64 ``.npy`` file."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(values, dtype=np.float64), allow_pickle=False)
    return buffer.getvalue()


def job_failed(job: Job, connection: Redis, exc_type: type[BaseException],
               exc_value: BaseException, traceback: Any) -> None:
    """RQ failure callback (work horse or reaper): end the job ``failed`` with a message."""
    finish(connection, job, JobState.FAILED, error=failure_message(job, exc_type, exc_value))


def failure_message(job: Job, exc_type: type[BaseException], exc_value: BaseException) -> str:
    """What a person should read about why ``job`` failed."""
    if issubclass(exc_type, LightTouchError):
        return str(exc_value)
    if issubclass(exc_type, JobTimeoutException):
        return (f"the job ran longer than its limit of {job.timeout} s (solver time limit plus "
                f"{FINISH_ALLOWANCE_S} s for loading data, shrinking and projection) and was "
                "stopped; lower solver.iterations or solver.time_limit_s")
    if issubclass(exc_type, AbandonedJobError):
        return ("the worker running this job stopped sending heartbeats (its machine or "
                "container was killed or lost); the job was not retried, submit it again")
    return (f"internal error ({exc_type.__name__}: {exc_value}); please report it with "
            f"job id {job.id}")


def horse_killed(job: Job, pid: int, status: int, rusage: Any) -> None:
    """RQ work-horse-killed handler (worker parent): end the job ``failed``, saying how it died."""
    if os.WIFSIGNALED(status):
        how = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"ended with exit status {os.waitstatus_to_exitcode(status)}"
    peak_mib = rusage.ru_maxrss / 1024 if rusage is not None else float("nan")
    finish(job.connection, job, JobState.FAILED, error=(
        f"the process solving this job was {how} (peak memory {peak_mib:.0f} MiB); if it ran "
        "out of memory, shrink the problem or give the worker more memory"))


def reap_abandoned(connection: Redis, period_s: int) -> None:
    """Fail jobs whose worker stopped heartbeating; at most once per ``period_s`` across callers."""
    if connection.set(REAPER_LOCK_KEY, 1, nx=True, ex=period_s):
        StartedJobRegistry(QUEUE_NAME, connection, serializer=SERIALIZER,
                           death_penalty_class=TimerDeathPenalty).cleanup()


def live_workers(connection: Redis, heartbeat_s: int) -> int:
    """Workers on the queue whose last heartbeat is recent (within the missed-heartbeat bound)."""
    cutoff = time.time() - MISSED_HEARTBEATS * heartbeat_s
    return sum(1 for worker in Worker.all(queue=job_queue(connection))
               if worker.last_heartbeat is not None and worker.last_heartbeat.timestamp() >= cutoff)


class LightTouchWorker(Worker):
    """RQ's fork-per-job worker, heartbeating every ``job_monitoring_interval`` seconds."""

    @property
    def dequeue_timeout(self) -> int:
        """Wake from an idle wait once per heartbeat to renew this worker's registration."""
        return self.job_monitoring_interval

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        """A running job counts as abandoned after ``MISSED_HEARTBEATS`` missed renewals."""
        return self.job_monitoring_interval * MISSED_HEARTBEATS


_WARM_UP_PROBLEM = {
    "dimension": 3, "bounds": {"lower": -1.0, "upper": 1.0},
    "objective": {"type": "empirical_risk", "loss": "hinge", "l2": 0.1,
                  "data": {"features": [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], "labels": [1.0, -1.0]}},
    "constraints": [{"type": "ordering", "chain": [0, 1, 2]}],
}


def warm_up() -> None:
    """Load (or compile) every algorithm's numba kernels here, so forked horses inherit them.

    A tiny strongly convex problem (which every algorithm accepts) is solved once per
    algorithm; none of them starts a thread pool on so small a problem.
    """
    for algorithm in ALGORITHMS:
        if algorithm != "auto":
            solve(dict(_WARM_UP_PROBLEM, solver={"algorithm": algorithm, "iterations": 2000}))


def run_worker(connection: Redis, *, heartbeat_s: int, burst: bool = False) -> bool:
    """Warm up, then work on the queue until stopped (or until it is empty, with ``burst``)."""
    warm_up()
    worker = LightTouchWorker([job_queue(connection)], connection=connection,
                              serializer=SERIALIZER, job_monitoring_interval=heartbeat_s,
                              work_horse_killed_handler=horse_killed)
    return worker.work(burst=burst, logging_level="INFO")
