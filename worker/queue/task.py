"""The RQ task: solve a job's spec in a work horse, stream progress, store the result; and
what RQ calls when a job fails or its horse dies."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import signal
from collections.abc import Callable
from typing import Any

import numpy as np
from redis import Redis
from redis.exceptions import RedisError
from rq.exceptions import AbandonedJobError
from rq.job import Job, get_current_job
from rq.timeouts import JobTimeoutException

from worker.algorithms.run.loop import Progress
from worker.errors import LightTouchError
from worker.pipeline.solve import solve
from worker.queue.events import StoredResult, append_unless_ended, finish
from worker.queue.keys import SPEC, key
from worker.queue.state import JobState
from worker.queue.warm import earlier_result
from worker.result import Result
from worker.settings import job_settings
from worker.spec.models import parse_spec

log = logging.getLogger(__name__)

#: Seconds a work horse may run past the solver's time limit (data loading, shrinking LP,
#: projection) before RQ kills it.
FINISH_ALLOWANCE_S = 60


def hard_timeout(time_limit_s: float) -> int:
    """Seconds after which RQ kills a job whose solver was given ``time_limit_s``."""
    return int(np.ceil(time_limit_s)) + FINISH_ALLOWANCE_S


def run_job(time_limit_s: float, max_job_bytes: int | None = None) -> None:
    """The RQ job: solve the job's spec in this work horse, streaming progress, storing the result.

    ``time_limit_s`` bounds the solver's time when smaller than the spec's own limit (the
    service's job timeout; a setting of the job, :attr:`worker.settings.JobSettings.time_limit_s`);
    a problem whose compiled memory estimate exceeds ``max_job_bytes`` fails naming the field.
    """
    job = get_current_job()
    connection = job.connection
    running_ttl = job.timeout + job.result_ttl
    if not append_unless_ended(connection, job.id, "status", {"status": str(JobState.RUNNING)},
                               running_ttl):
        return   # cancelled while it waited
    spec = parse_spec(json.loads(connection.get(key(SPEC, job.id))))
    earlier = earlier_result(connection, job.meta.get("tenant", ""), spec)
    result = solve(spec, progress=_progress_publisher(connection, job.id, running_ttl),
                   earlier=earlier,
                   settings=job_settings(max_job_bytes, time_limit_s=time_limit_s))
    _store_result(connection, job, result)


def _progress_publisher(connection: Redis, job_id: str, ttl: int) -> Callable[[Progress], None]:
    """The progress callback: each report becomes a ``progress`` event and the latest progress
    (a report Redis cannot take, even after the connection's retries, is skipped)."""
    def publish_progress(progress: Progress) -> None:
        try:
            append_unless_ended(connection, job_id, "progress", dataclasses.asdict(progress),
                                ttl, latest_progress=True)
        except RedisError as error:   # Redis away past the retries: skip this report
            log.warning("progress of job %s not published: %s", job_id, error)
    return publish_progress


def _store_result(connection: Redis, job: Job, result: Result) -> None:
    """End the job ``succeeded``, storing the Result JSON, its vectors as ``.npy`` and its
    summary, and publishing the ``result`` event with that summary (the figures followers end
    on) — unless it has already ended (then the result is dropped: one job, one outcome)."""
    vectors = {"mean": npy_bytes(result.mean.solution)}
    if result.projected is not None:
        vectors["projected"] = npy_bytes(result.projected.solution)
    solutions = [member.solution for member in result.mixture if member.solution is not None]
    if solutions:
        vectors["mixture"] = npy_bytes(solutions)
    job.meta["algorithm"] = result.algorithm   # what "auto" chose, for listings
    job.save_meta()
    summary = result.summary().model_dump()
    event = {"status": str(JobState.SUCCEEDED), "algorithm": result.algorithm,
             "sizes": result.sizes.model_dump(), "expected": result.expected.model_dump(),
             "summary": summary}
    finish(connection, job, JobState.SUCCEEDED, event=("result", event),
           stored=StoredResult(result.model_dump_json(), vectors, summary))


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
