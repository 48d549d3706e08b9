"""A time limit that strikes before the first planned snapshot (inside the step-scale
warm-up, or with an iteration count no run could finish) still ends with a Result."""

from __future__ import annotations

import pytest

from tests.local_stack import small_spec
from worker import solve
from worker.errors import SpecError
from worker.spec.models import MAX_ITERATIONS

ALGORITHMS = ["fulltouch", "lighttouch", "midtouch", "projected_sgd", "epro_sgd",
              "epro_orda", "lagrangian", "proxy_lagrangian"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_budget_no_run_can_finish_stops_at_the_time_limit_with_a_result(algorithm):
    spec = small_spec(iterations=MAX_ITERATIONS, time_limit_s=0.5)
    spec["solver"]["algorithm"] = algorithm
    spec["objective"]["l2"] = 0.1 if algorithm in ("midtouch", "epro_sgd", "epro_orda") else 0
    result = solve(spec)
    assert result.mixture and abs(sum(m.weight for m in result.mixture) - 1) < 1e-9
    assert result.stats["iterations"] < MAX_ITERATIONS
    assert result.projected is not None and result.projected.max_violation <= 1e-9


def test_the_time_limit_inside_the_warm_up_keeps_the_iterate_reached():
    spec = small_spec(iterations=10**9, time_limit_s=0.5)       # warm-up: 6.25e7 iterations
    stats = solve(spec).stats
    assert stats["stopped_by"] == "time_limit" and stats["candidates"] >= 1


def test_an_iteration_count_beyond_the_cap_names_the_field():
    spec = small_spec(iterations=2**63)
    with pytest.raises(SpecError) as error:
        solve(spec)
    assert error.value.issues[0][0] == "solver.iterations"
    assert str(MAX_ITERATIONS) in str(error.value)
