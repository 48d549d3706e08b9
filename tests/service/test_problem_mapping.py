"""Engine errors carry no HTTP: the edge's table gives each its status and title."""

from __future__ import annotations

import pytest

from service.errors import JobNotFound, TooManyJobs
from service.problems import status_and_title
from worker.errors import DataError, LightTouchError, SolverError, SpecError


@pytest.mark.parametrize(("error", "expected"), [
    (SpecError.at("dimension", "must be positive"), (422, "Invalid problem spec")),
    (DataError("objective.data.features", "unreadable"), (422, "Unusable problem data")),
    (SolverError("the LP failed"), (500, "Solver failure")),
    (LightTouchError("something to fix"), (400, "LightTouch error")),
])
def test_engine_errors_map_to_their_status(error, expected):
    assert not hasattr(type(error), "status_code")
    assert status_and_title(error) == expected


def test_edge_errors_keep_their_own_status():
    assert status_and_title(JobNotFound("no such job"))[0] == 404
    assert status_and_title(TooManyJobs(3, 5))[0] == 429
