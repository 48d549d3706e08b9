"""The per-job memory budget: a problem whose estimate exceeds it is refused naming the
field that sizes it most, from the spec alone before any data are read, and again once the
data are compiled."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tests.local_stack import small_spec
from tests.tables.raw import write_table
from worker import solve
from worker.datasets.lattice import BOX_BOUND, PAPER_DIMS, make_truth, sample_pairs
from worker.errors import SpecError
from worker.pipeline.memory import declared_parts, memory_parts
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings, job_settings
from worker.spec.models import parse_spec
from worker.tables.lower import lower_tables


def test_the_spec_alone_refuses_a_huge_dimension_times_candidates_before_reading_data():
    spec = small_spec()
    spec.update(dimension=4_194_304, constraints=[])
    spec["solver"]["candidates"] = 10_000
    spec["objective"] = {"type": "quadratic", "Q": {"uri": "file:///nowhere/q.npz"}}
    with pytest.raises(SpecError) as error:          # the missing file is never opened
        summarize_spec(spec, max_job_bytes=2**30)
    assert error.value.issues[0][0] == "solver.candidates"
    assert "335,8" in str(error.value) and "LIGHTTOUCH_MAX_JOB_BYTES" in str(error.value)


def test_compiled_data_over_the_budget_name_the_data():
    rng = np.random.default_rng(0)
    spec = small_spec()
    spec["objective"] = {"type": "empirical_risk", "loss": "logistic",
                         "data": {"features": rng.normal(size=(2000, 4)).tolist(),
                                  "labels": np.sign(rng.normal(size=2000)).tolist()}}
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    parts = memory_parts(problem, 100)
    budget = sum(parts.values()) - 1
    with pytest.raises(SpecError) as validated:
        summarize_spec(spec, max_job_bytes=budget)
    with pytest.raises(SpecError) as solved:
        solve(spec, max_job_bytes=budget)
    with pytest.raises(SpecError) as at_the_edge:       # settings resolved by the caller
        solve(spec, settings=job_settings(budget))
    assert validated.value.issues[0][0] == solved.value.issues[0][0] == "objective.data"
    assert at_the_edge.value.issues == solved.value.issues
    assert summarize_spec(spec, max_job_bytes=budget + 1)["memory_estimate_bytes"] == budget + 1


def test_the_declared_estimate_is_a_lower_bound_of_the_compiled_one():
    spec = small_spec()
    spec["constraints"] = [{"type": "monotone_lattice", "shape": [2, 2], "increasing": [0, 1]}]
    declared = declared_parts(parse_spec(spec))
    compiled = memory_parts(compile_problem(parse_spec(spec), DataSource([], data_settings())), 100)
    assert all(declared[field] <= compiled[field] for field in declared)


def test_the_spec_alone_refuses_a_huge_calibrated_lattice_before_reading_its_table():
    spec = {"model": {"type": "calibrated_lattice", "lattice": {"sizes": 2},
                      "features": [{"column": f"x{j}"} for j in range(22)]},
            "objective": {"type": "empirical_risk", "loss": "hinge", "data": {
                "table": {"uri": "file:///nowhere/t.csv"}, "label": "y"}},
            "solver": {"candidates": 1000}}
    with pytest.raises(SpecError) as error:          # the missing file is never opened
        summarize_spec(spec, max_job_bytes=2**30)
    assert error.value.issues[0][0] == "solver.candidates"


@pytest.mark.parametrize("model", [
    {"type": "calibrated_linear", "features": [{"column": "x", "keypoints": 8},
                                               {"column": "c", "categories": "auto"}]},
    {"type": "calibrated_lattice", "lattice": {"sizes": 3},
     "features": [{"column": "x"}, {"column": "c", "categories": "auto"}]},
])
def test_a_calibrated_models_declared_estimate_is_a_lower_bound_of_the_compiled_one(
        tmp_path, model):
    columns = {"x": [1.0, 1.0, 1.0, 2.0, 2.0, 5.0] * 4,       # quantiles repeat and merge
               "c": ["a", "b", "c", "a", "b", "d"] * 4, "y": [1, -1] * 12}
    spec = parse_spec({"model": model, "objective": {"type": "empirical_risk",
                                                     "loss": "hinge", "data": {
        "table": write_table(tmp_path / "t", columns), "label": "y"}}})
    lowered = lower_tables(spec, DataSource([tmp_path], settings=data_settings()))
    compiled = memory_parts(compile_problem(lowered.spec, lowered.source), 100)
    declared = declared_parts(spec)
    assert 0 < declared["solver.candidates"] <= compiled["solver.candidates"]


def pairs_spec(directory, pairs: int) -> dict:
    """The paper's lattice (12 inputs of size 2) from raw pairs in two parquet tables, as
    ``bench/table_lattice_scale.py`` runs it at 612,587 pairs and more."""
    names = [f"x{j}" for j in range(PAPER_DIMS)]
    positive, negative = sample_pairs(pairs, make_truth(PAPER_DIMS, 0), 0.05,
                                      np.random.default_rng(0))
    tables = {side: write_table(directory / side, dict(zip(names, x.T, strict=True)),
                                "parquet")
              for side, x in (("positive", positive), ("negative", negative))}
    return {"bounds": {"lower": -BOX_BOUND, "upper": BOX_BOUND},
            "model": {"type": "calibrated_lattice", "features": [
                {"column": name, "keypoints": [0, 1], "monotonic": "increasing"}
                for name in names]},
            "objective": {"type": "empirical_risk", "loss": "pairwise_hinge", "data": tables},
            "solver": {"time_limit_s": 5}}


def test_the_estimate_covers_what_a_pairs_job_allocates(tmp_path):
    spec = pairs_spec(tmp_path, 12_000)       # more pairs than a polish LP keeps
    solve(spec, roots=[tmp_path])             # the kernels compiled, outside the count
    tracemalloc.start()
    try:
        result = solve(spec, roots=[tmp_path])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "polish_status" in result.stats and "lower_bound_status" in result.stats
    estimate = summarize_spec(spec, [tmp_path])["memory_estimate_bytes"]
    assert peak <= estimate
