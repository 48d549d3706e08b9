"""Engine and queue errors carry no HTTP: the edge's table gives each its status and title."""

from __future__ import annotations

import pytest

from service.errors import NotReady, Unauthorized
from service.problems import response_headers, status_and_title
from worker import errors


@pytest.mark.parametrize(("error", "expected"), [
    (errors.SpecError.at("dimension", "must be positive"), (422, "Invalid problem spec")),
    (errors.DataError("objective.data.features", "unreadable"), (422, "Unusable problem data")),
    (errors.SolverError("the LP failed"), (500, "Solver failure")),
    (errors.JobNotFound("0" * 32), (404, "Job not found")),
    (errors.JobConflict("job 1 already ended: succeeded"), (409, "Job state conflict")),
    (errors.TooManyJobs(3, 5), (429, "Too many active jobs")),
    (errors.ConfigError("LIGHTTOUCH_HEARTBEAT_S: too small"), (400, "LightTouch error")),
    (errors.LightTouchError("something to fix"), (400, "LightTouch error")),
])
def test_engine_errors_map_to_their_status(error, expected):
    assert not hasattr(type(error), "status_code") and not hasattr(type(error), "title")
    assert status_and_title(error) == expected


def test_a_full_tenant_is_told_when_to_retry():
    assert response_headers(errors.TooManyJobs(3, 5)) == {"Retry-After": "5"}
    assert response_headers(errors.JobNotFound("0" * 32)) == {}


def test_edge_errors_keep_their_own_status_and_headers():
    assert status_and_title(NotReady("no worker")) == (503, "Service not ready")
    assert status_and_title(Unauthorized("unknown API key"))[0] == 401
    assert response_headers(Unauthorized("unknown API key")) == {
        "WWW-Authenticate": 'Bearer realm="lighttouch"'}
