"""A run whose iterates overflow ends with a SolverError saying what to change, not with an
exception from the shrinking LP."""

from __future__ import annotations

import pytest

from tests.local_stack import small_spec
from worker import solve
from worker.errors import SolverError
from worker.spec.models import MAX_SCALE


def test_a_diverging_run_is_a_solver_error_naming_the_step_scale():
    spec = small_spec(iterations=20_000)
    spec["solver"]["eta_w"] = MAX_SCALE
    spec["bounds"] = {}
    with pytest.raises(SolverError, match="diverged.*solver.eta_w"):
        solve(spec)
