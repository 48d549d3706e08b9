"""What the games promise (docs/rates.md#what-the-games-promise): every feasible level of a
sweep ends feasible, a warm start resumes the game (multipliers, theta steps) and needs fewer
iterations than a cold start, and an answer beyond the tolerance says so in its
``feasibility`` and never reports ``converged``."""

from __future__ import annotations

import copy

import pytest

from service.progress import summary_text
from tests.problem.test_rates import rate_spec, term
from tests.test_mixture import result_json
from worker import solve
from worker.result import Result

RULE = {"type": "rate", "lhs": term("true_positive_rate", "a"), "op": ">=",
        "rhs": term("true_positive_rate", None, 0.85)}


def auto_spec(constraints: list[dict]) -> dict:
    spec = rate_spec(constraints)
    spec["solver"] |= {"iterations": "auto", "seed": 3, "time_limit_s": 60}
    return spec


@pytest.fixture(scope="module")
def cold() -> tuple[dict, Result]:
    spec = auto_spec([RULE, dict(copy.deepcopy(RULE), lhs=term("true_positive_rate", "b"))])
    return spec, solve(spec)


def test_a_sweep_ends_feasible_at_every_feasible_level(cold):
    spec = copy.deepcopy(cold[0])
    spec["sweep"] = {"path": "constraints[*].rhs.scale", "values": [0.85, 0.9, 0.95]}
    for point in solve(spec).sweep.points:
        result = point.result
        assert result.feasibility.feasible, point.value
        assert result.expected.max_violation <= result.feasibility.tolerance
        assert result.stats["stopped_by"] == "converged"


def test_a_warm_start_resumes_the_game_in_fewer_iterations(cold, tmp_path):
    spec, earlier = cold
    assert earlier.resume is not None and earlier.resume.regret == "swap"
    assert len(earlier.resume.multipliers) == 3          # m + 1
    path = tmp_path / "earlier.json"
    path.write_text(earlier.model_dump_json())
    warm = solve(dict(spec, solver=dict(spec["solver"], warm_start={"result": str(path)})))
    assert warm.stats["eta_w_warmup"] == "resumed"
    assert warm.stats["theta_diameter"] == earlier.stats["theta_diameter"]
    assert warm.stats["iterations"] < earlier.stats["iterations"]
    assert warm.feasibility.feasible
    assert warm.expected.objective <= earlier.expected.objective + 1e-3


def test_an_unmet_level_says_so_and_does_not_claim_convergence():
    at_least = {"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": ">=",
                "rhs": 0.7}
    at_most = dict(at_least, op="<=", rhs=0.3)
    spec = auto_spec([at_least, at_most])
    spec["solver"]["time_limit_s"] = 3
    result = solve(spec)
    assert result.expected.max_violation > 0.1
    assert result.feasibility.feasible is False
    assert result.summary().feasibility == result.feasibility
    assert "NOT feasible (tolerance 0.001)" in summary_text(result.algorithm, result.summary())
    assert result.stats["stopped_by"] == "time_limit"
    assert result.status == "succeeded"          # the job's meaning: it ran to its end


@pytest.mark.parametrize(("violation", "feasible"), [(0.0, True), (1e-3, True), (2e-3, False)])
def test_a_result_file_without_its_verdict_is_judged_at_the_default_tolerance(violation,
                                                                              feasible):
    written = result_json()
    written["expected"]["max_violation"] = violation
    verdict = Result.model_validate(written).feasibility
    assert (verdict.feasible, verdict.tolerance) == (feasible, 1e-3)


def test_an_unmet_sweep_point_is_solved_again_from_the_next_points_answer():
    most = {"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": ">=",
            "rhs": 0.8}
    spec = auto_spec([most])
    spec["solver"]["iterations"] = 1        # the first point stops at its start, w = 0
    alone = solve(spec)
    assert not alone.feasibility.feasible               # what the first pass finds there
    spec["sweep"] = {"path": "solver.iterations", "values": [1, 4000]}
    first, second = solve(spec).sweep.points
    assert second.result.feasibility.feasible
    assert first.result.feasibility.feasible
    assert "warm_start" in {member.kind for member in first.result.mixture}
