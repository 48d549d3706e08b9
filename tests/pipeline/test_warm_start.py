"""Warm starts in process (solver.warm_start.result): from an optimum the run stops at once
with the same answer; files of another dimension, missing files and jobs are refused by
field."""

from __future__ import annotations

import copy

import pytest

from tests.specs import random_spec
from worker import solve
from worker.errors import SpecError


@pytest.fixture(scope="module")
def optimum(tmp_path_factory):
    spec = random_spec("logistic", "mixed", 3, iterations=100_000)
    spec["solver"]["algorithm"] = "lighttouch"
    result = solve(spec)
    path = tmp_path_factory.mktemp("warm") / "result.json"
    path.write_text(result.model_dump_json())
    return spec, result, path


def warm(spec: dict, path, **solver) -> dict:
    spec = copy.deepcopy(spec)
    spec["solver"].update(warm_start={"result": str(path)}, **solver)
    return spec


def test_a_warm_start_from_an_optimum_stops_at_once_with_the_same_answer(optimum):
    spec, cold, path = optimum
    again = solve(warm(spec, path, iterations=1))
    assert again.stats["iterations"] <= 1
    assert again.expected.objective <= cold.expected.objective + 1e-9
    assert again.expected.max_violation <= spec["solver"].get("tolerance", 1e-3)
    assert again.expected.objective == pytest.approx(cold.expected.objective, rel=1e-3)
    kinds = {member.kind for member in again.mixture}
    assert kinds <= {"warm_start", "iterate", "average"}


def test_a_warm_start_runs_from_the_earlier_mean_and_penalty(optimum):
    spec, cold, path = optimum
    again = solve(warm(spec, path, iterations=2000))
    started_cold = solve(dict(spec, solver=dict(spec["solver"], iterations=2000)))
    assert again.expected.objective <= started_cold.expected.objective + 1e-9
    assert cold.stats["gamma"] > started_cold.stats["gamma"]     # the long run raised it
    assert again.stats["gamma"] >= cold.stats["gamma"]           # and the warm run keeps it


def test_another_dimension_is_refused(optimum, tmp_path):
    _, _, path = optimum
    other = random_spec("logistic", "mixed", 4, d=4, iterations=100)
    with pytest.raises(SpecError, match=r"solver\.warm_start: the earlier result has 8 "
                                        r"parameters and this problem 4"):
        solve(warm(other, path))


def test_missing_files_and_jobs_are_refused_by_field(optimum, tmp_path):
    spec, _, _ = optimum
    with pytest.raises(SpecError, match=r"solver\.warm_start\.result: cannot read"):
        solve(warm(spec, tmp_path / "none.json"))
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SpecError, match="is not a Result JSON"):
        solve(warm(spec, tmp_path / "bad.json"))
    job = copy.deepcopy(spec)
    job["solver"]["warm_start"] = {"job": "0" * 32}
    with pytest.raises(SpecError, match=r"solver\.warm_start\.job: jobs are warm starts on "
                                        "the service"):
        solve(job)
