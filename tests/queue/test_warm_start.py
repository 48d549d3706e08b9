"""solver.warm_start.job on the queue: a tenant's earlier job starts the next one; another
tenant's job, an unknown job and a file are refused with the field named."""

from __future__ import annotations

import json
import re

import pytest

from tests.local_stack import small_spec
from tests.queue.jobs import ADMISSION
from tests.queue.test_task import work_in_process
from worker.errors import SpecError
from worker.queue.records import job_record, stored_result
from worker.queue.state import JobState
from worker.queue.submit import submit_job
from worker.result import Result
from worker.spec.models import parse_spec


def submit(connection, tenant: str, warm_start: dict | None = None, **changes) -> str:
    spec = small_spec(iterations=5000)
    if warm_start is not None:
        spec["solver"]["warm_start"] = warm_start
    spec.update(changes)
    text = json.dumps(spec)
    job_id, _ = submit_job(connection, ADMISSION, tenant, parse_spec(json.loads(text)), text,
                           None)
    return job_id


def test_a_tenants_earlier_job_warm_starts_the_next(connection):
    first = submit(connection, "alpha")
    work_in_process(connection)
    earlier = Result.model_validate_json(stored_result(connection, first))
    second = submit(connection, "alpha", {"job": first})
    work_in_process(connection)
    assert job_record(connection, "alpha", second).status == JobState.SUCCEEDED
    result = Result.model_validate_json(stored_result(connection, second))
    assert result.expected.objective <= earlier.expected.objective + 1e-9


@pytest.mark.parametrize(("tenant", "warm_start", "says"), [
    ("beta", "first", "solver.warm_start.job: no job"),
    ("alpha", "f" * 32, "solver.warm_start.job: no job"),
    ("alpha", {"result": "/etc/passwd"}, "solver.warm_start.result: the service reads no"),
])
def test_other_tenants_unknown_jobs_and_files_are_refused_when_submitted(connection, tenant,
                                                                         warm_start, says):
    first = submit(connection, "alpha")
    work_in_process(connection)
    named = {"job": first} if warm_start == "first" else \
        warm_start if isinstance(warm_start, dict) else {"job": warm_start}
    with pytest.raises(SpecError, match=re.escape(says)):
        submit(connection, tenant, named)


def test_a_job_without_a_result_is_refused_and_another_dimension_fails_the_job(connection):
    first = submit(connection, "alpha")
    with pytest.raises(SpecError, match="has no result"):
        submit(connection, "alpha", {"job": first})              # still queued
    work_in_process(connection)
    three = {"dimension": 3, "objective": {"type": "quadratic", "Q": [[1, 0, 0], [0, 1, 0],
                                                                        [0, 0, 1]]},
             "constraints": [{"type": "ordering", "chain": [0, 1, 2]}]}
    refused = submit(connection, "alpha", {"job": first}, **three)
    work_in_process(connection)
    record = job_record(connection, "alpha", refused)
    assert record.status == JobState.FAILED
    assert "solver.warm_start: the earlier result has 4 parameters and this problem 3" \
        in record.error
