"""A job's ``solver.warm_start`` on the service: the earlier job's Result, of the same tenant
only (the dimension is checked when the problem is compiled,
:func:`worker.pipeline.warm.warm_options`)."""

from __future__ import annotations

from redis import Redis

from worker.errors import JobNotFound, SpecError
from worker.queue.keys import RESULT, key
from worker.queue.records import load_job, stored_result
from worker.result import Result
from worker.spec.models import Spec
from worker.spec.warm_start import WarmStartJob


def check_warm_start(connection: Redis, tenant: str, spec: Spec) -> str | None:
    """The id of the job ``solver.warm_start`` names, if ``tenant`` owns it and its result is
    stored; None without a warm start; a :class:`SpecError` naming the field otherwise (also
    for a file, which the service does not read). Called when a job is submitted and again
    when it runs (the earlier result may expire in between)."""
    start = spec.solver.warm_start
    if start is None:
        return None
    if not isinstance(start, WarmStartJob):
        raise SpecError.at("solver.warm_start.result", "the service reads no local files; "
                           "give {\"job\": \"<id>\"} of one of your earlier jobs")
    try:
        load_job(connection, tenant, start.job)
    except JobNotFound:
        raise SpecError.at("solver.warm_start.job", f"no job {start.job!r} of yours; a warm "
                           "start names one of your own earlier jobs") from None
    if not connection.exists(key(RESULT, start.job)):
        raise SpecError.at("solver.warm_start.job", f"job {start.job!r} has no result (it "
                           "has not succeeded, or its result expired)")
    return start.job


def earlier_result(connection: Redis, tenant: str, spec: Spec) -> Result | None:
    """The Result of the job ``solver.warm_start`` names (:func:`check_warm_start`)."""
    job_id = check_warm_start(connection, tenant, spec)
    if job_id is None:
        return None
    try:
        return Result.model_validate_json(stored_result(connection, job_id))
    except JobNotFound:
        raise SpecError.at("solver.warm_start.job", f"job {job_id!r} has no result (its "
                           "result expired)") from None
