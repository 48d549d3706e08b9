"""Example weights on a calibrated model's raw pair tables read in partitions (one weight
per pair, read and normalized as on compiled pair tables: worker.distributed.weights): the
same bits on a LocalCluster of 2 as in this process, CVXPY's weighted optimum of the lowered
problem, a point valued through the partitions as in memory and as the pairs repeated by
integer weights, and the refusals that name the field, the row and the file."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.data.helpers import isolated_data_cache
from tests.distributed.test_pairs import same_answer
from tests.distributed.test_raw_pairs import (
    in_memory_lowering,
    listed_calibration,
    lowered_inline,
    raw_sides,
    raw_spec,
)
from tests.distributed.test_weights import (
    assert_bad_weights_refused,
    assert_unrangeable_weights_refused,
    weights_file,
)
from tests.specs import exact_optimum
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.distributed.executors import LocalExecutor
from worker.distributed.pair_batch import open_pairs
from worker.distributed.pairs import plan_pairs
from worker.distributed.raw_tables import RawTables, fitted_transform
from worker.kernels.objective import objective_value
from worker.problem.compile import compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)


def test_weighted_raw_pairs_give_the_same_bits_on_two_workers_and_the_weighted_optimum(
        tmp_path):
    """The pairs the positive side's rating does not favour weigh most."""
    positive, negative = raw_sides(2400)
    weights = np.where(positive["rating"] < negative["rating"], 6.0,
                       np.random.default_rng(4).uniform(0.0, 1.0, 2400))
    spec = weights_file(raw_spec(tmp_path, iterations=150_000), tmp_path, weights)
    answers = {w: solve(spec | {"solver": spec["solver"] | {"workers": w}}, roots=[tmp_path])
               for w in (0, 2)}
    same_answer(answers[0], answers[2])
    assert answers[0].stats["partitions"] == 4 and answers[2].stats["bytes_moved"] > 0
    assert answers[0].stats["communication_rounds"] == answers[2].stats["communication_rounds"]
    in_memory = solve(spec | {"solver": spec["solver"] | {"workers": None}}, roots=[tmp_path])
    assert answers[0].model == in_memory.model
    optimum, _ = exact_optimum(lowered_inline(spec, tmp_path, weights))
    unweighted, _ = exact_optimum(lowered_inline(spec, tmp_path))
    assert abs(unweighted - optimum) > 0.05 * optimum
    for result in (answers[0], in_memory):
        assert result.feasibility.feasible and result.projected.max_violation <= 1e-6
        assert result.projected.objective == pytest.approx(optimum, rel=1e-6)
        assert result.stats["lower_bound"] <= optimum + 1e-6


def test_integer_weights_value_a_point_on_partitions_as_in_memory_and_as_pairs_repeated(
        tmp_path):
    """The calibration is listed, so the repeated tables have the same model."""
    counts = np.random.default_rng(5).integers(0, 4, 300)
    (tmp_path / "weighted").mkdir()
    (tmp_path / "repeated").mkdir()
    sides = raw_sides(300)
    spec = weights_file(listed_calibration(raw_spec(tmp_path / "weighted", n=300,
                                                    sides=sides)),
                        tmp_path / "weighted", counts)
    data, parsed = data_settings(), parse_spec(spec)
    plan = plan_pairs(parsed, [tmp_path / "weighted"], 100, data)
    transform = fitted_transform(parsed, RawTables.of_pairs(plan), LocalExecutor(), 3, data)
    lowered = in_memory_lowering(spec, tmp_path / "weighted")
    points = np.random.default_rng(6).normal(size=(3, transform.d))
    with open_pairs(replace(plan, transform=transform), 0, None, 0, data) as batch:
        rowless = compile_problem(lowered.spec, lowered.source, width_elsewhere=batch.d)
        partitioned = batch.values(points, problem_arrays(rowless, 1))
    assert len(plan.ranges) == 4 and plan.weighted
    in_memory = problem_arrays(compile_problem(lowered.spec, lowered.source), 1)
    repeated_sides = tuple({column: np.repeat(values, counts) for column, values in s.items()}
                           for s in sides)
    copies = in_memory_lowering(listed_calibration(raw_spec(
        tmp_path / "repeated", n=int(counts.sum()), sides=repeated_sides)), tmp_path / "repeated")
    repeated = problem_arrays(compile_problem(copies.spec, copies.source), 1)
    unweighted = spec | {"objective": spec["objective"] | {"data": {
        k: v for k, v in spec["objective"]["data"].items() if k != "weights"}}}
    plain = in_memory_lowering(unweighted, tmp_path / "weighted")
    alike = problem_arrays(compile_problem(plain.spec, plain.source), 1)
    for k, w in enumerate(points):
        assert partitioned[k] == pytest.approx(objective_value(in_memory, w), rel=1e-12)
        assert partitioned[k] == pytest.approx(objective_value(repeated, w), rel=1e-12)
        assert abs(partitioned[k] - objective_value(alike, w)) > 1e-3


def test_bad_weights_on_raw_pairs_are_refused_naming_the_field_the_row_and_the_file(tmp_path):
    """Three partitions of 97, 97 and 6 pairs: rows 7, 123 and 199 are in each."""
    spec = raw_spec(tmp_path, n=200, iterations=1000)
    spec["solver"]["svrg"]["partition_rows"] = 50
    assert_bad_weights_refused(spec, tmp_path, np.ones(200), "objective.data.positive")


def test_weights_that_cannot_be_read_in_ranges_are_refused_before_any_row_is_read(tmp_path):
    """The tables hold a NaN that the sample round would refuse: the weights are refused
    first."""
    positive, negative = raw_sides(200)
    positive["rating"][5] = np.nan
    spec = raw_spec(tmp_path, n=200, iterations=1000, sides=(positive, negative))
    assert_unrangeable_weights_refused(spec, tmp_path, np.ones(200))


def test_weights_in_csv_are_taken_in_memory(tmp_path):
    spec = raw_spec(tmp_path, n=200, workers=None, iterations=1000)
    spec["solver"]["algorithm"] = "auto"
    weights = np.arange(200) % 3
    (tmp_path / "w.csv").write_text("w\n" + "".join(f"{w}.0\n" for w in weights))
    spec["objective"]["data"]["weights"] = {"uri": (tmp_path / "w.csv").as_uri()}
    result = solve(spec, roots=[tmp_path])
    optimum, _ = exact_optimum(lowered_inline(spec, tmp_path, weights))
    assert result.projected.objective == pytest.approx(optimum, rel=1e-6)
