"""Sweeps: each point equals the separate solve of its variant (warm-started from the point
before), the front carries training and validation numbers, and paths are checked."""

from __future__ import annotations

import copy

import pytest

from tests.problem.test_rates import rate_spec, term
from worker import solve
from worker.errors import SpecError
from worker.spec.models import parse_spec

RULE = {"type": "rate", "lhs": term("true_positive_rate", "a"), "op": ">=",
        "rhs": term("true_positive_rate", None, 0.8)}
VALUES = [0.8, 0.9, 0.95]


def swept() -> dict:
    spec = rate_spec([RULE, copy.deepcopy(RULE)], iterations=800)
    spec["validation"] = {"fraction": 0.25, "seed": 2}
    spec["sweep"] = {"path": "constraints[*].rhs.scale", "values": VALUES}
    return spec


@pytest.fixture(scope="module")
def sweep_result():
    return solve(swept())


def test_each_point_equals_its_separate_solve(sweep_result, tmp_path):
    points = sweep_result.sweep.points
    assert [p.value for p in points] == VALUES
    before = None
    for k, point in enumerate(points):
        spec = swept()
        del spec["sweep"]
        for constraint in spec["constraints"]:
            constraint["rhs"]["scale"] = VALUES[k]
        if before is not None:
            spec["solver"]["warm_start"] = {"result": str(before)}
        alone = solve(spec)
        assert alone.mixture == point.result.mixture
        assert alone.report == point.result.report
        before = tmp_path / f"point{k}.json"
        before.write_text(alone.model_dump_json())
    assert sweep_result.mixture == points[0].result.mixture


def test_the_front_has_training_and_validation_numbers(sweep_result):
    front = sweep_result.sweep.front
    assert [f.value for f in front] == VALUES
    for point, result in zip(front, (p.result for p in sweep_result.sweep.points),
                             strict=True):
        mixture = result.report.training.models["mixture"]
        assert point.objective == result.expected.objective
        assert point.error == mixture.error
        assert point.validation_error == result.report.validation.models["mixture"].error


@pytest.mark.parametrize(("path", "says"), [
    ("constraints[5].rhs.scale", "has no element 5"),
    ("constraints[0].rhs.scale.x", "has no field 'x'"),
    ("objective[*]", "is not a non-empty list"),
])
def test_paths_that_name_nothing_are_refused(path, says):
    spec = swept()
    spec["sweep"]["path"] = path
    with pytest.raises(SpecError, match=r"sweep\.path: .*" + says.replace("[", r"\[")):
        solve(spec)


@pytest.mark.parametrize("path", ["", "sweep.values", "constraints[x]", "[0]", "a..b"])
def test_unreadable_paths_are_refused_when_parsed(path):
    spec = swept()
    spec["sweep"]["path"] = path
    with pytest.raises(SpecError, match="sweep.path"):
        parse_spec(spec)


@pytest.mark.parametrize(("path", "value", "field"), [
    ("constraints[0].op", "<>", r"constraints\[0\]\.op"),
    ("constraints[0].nothing.scale", 1.0, r"constraints\[0\]\.nothing"),
    ("solver.game.radius", -1.0, r"solver\.game\.radius"),
    ("solver.game.eta_lambda.x", 1.0, r"solver\.game\.eta_lambda"),
])
def test_a_value_or_field_the_spec_refuses_is_named(path, value, field):
    spec = swept()
    spec["sweep"] = {"path": path, "values": [value]}
    with pytest.raises(SpecError, match=field):
        solve(spec)


def test_the_sweep_as_a_whole_keeps_the_time_limit():
    spec = swept()
    spec["solver"].update(iterations=10**9, time_limit_s=1.5)
    result = solve(spec)
    limits = [p.result.stats["solve_s"] for p in result.sweep.points]
    assert all(p.result.stats["stopped_by_time_limit"] for p in result.sweep.points)
    assert sum(limits) <= 1.5 + 0.5 * len(limits), limits
