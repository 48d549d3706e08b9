"""A job's ``solver.warm_start`` on the service: the earlier job's Result, of the same tenant
only (the dimension is checked when the problem is compiled,
:func:`worker.pipeline.warm.warm_options`)."""

from __future__ import annotations

from redis import Redis

from worker.errors import JobNotFound, SpecError
from worker.queue.records import load_job, stored_result
from worker.result import Result
from worker.spec.models import Spec
from worker.spec.warm_start import WarmStartJob


def earlier_result(connection: Redis, tenant: str, spec: Spec) -> Result | None:
    """The Result of the job ``solver.warm_start.job`` names, if ``tenant`` owns it and it
    succeeded; a :class:`SpecError` naming the field otherwise (also for a file, which the
    service does not read)."""
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
    try:
        return Result.model_validate_json(stored_result(connection, start.job))
    except JobNotFound:
        raise SpecError.at("solver.warm_start.job", f"job {start.job!r} has no result (it "
                           "has not succeeded, or its result expired)") from None
