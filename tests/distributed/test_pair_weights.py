"""Example weights on ``pairwise_hinge``'s tables read in partitions (worker.distributed.weights
over the pairs' differences): the same bits on a LocalCluster as in this process, CVXPY's
(Clarabel's) weighted optimum, integer weights valued as repeated pairs, the §8.1 column
counts and the workers' memory, and the errors that name the field, the row and the file."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algorithms.test_weighted_objective import repeated
from tests.data.helpers import isolated_data_cache
from tests.distributed.test_pairs import pair_spec, same_answer, tables
from tests.distributed.test_weights import (
    assert_bad_weights_refused,
    assert_unrangeable_weights_refused,
    weights_file,
)
from tests.specs import exact_optimum
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.distributed.batch import InProcessBatch
from worker.distributed.options import SvrgOptions
from worker.distributed.pair_batch import WEIGHT_BYTES, open_pairs, pair_memory
from worker.distributed.pairs import plan_pairs
from worker.kernels.objective import objective_value
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)


def inline_pairs(spec: dict, positive: np.ndarray, negative: np.ndarray,
                 weights: np.ndarray | None) -> dict:
    """``spec`` with its pairs (and ``weights``, when given) inline, read in one process."""
    data = {"positive": positive.tolist(), "negative": negative.tolist()}
    if weights is not None:
        data["weights"] = np.asarray(weights).tolist()
    return spec | {"objective": spec["objective"] | {"data": data},
                   "solver": {k: v for k, v in spec["solver"].items() if k != "workers"}}


def test_weighted_pairs_give_the_same_bits_on_a_cluster_and_the_weighted_optimum(
        tmp_path, cluster, monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    positive, negative = tables(800, seed=3)
    weights = np.random.default_rng(4).uniform(0.0, 4.0, 800) ** 2
    spec = weights_file(pair_spec(tmp_path, "parquet", positive=positive, negative=negative,
                                  iterations=20_000), tmp_path, weights)
    in_process = solve(copy.deepcopy(spec), roots=[tmp_path])
    spec["solver"]["workers"] = 2
    on_cluster = solve(spec, roots=[tmp_path])
    same_answer(on_cluster, in_process)
    assert on_cluster.stats["lower_bound"] == in_process.stats["lower_bound"]
    assert on_cluster.stats["partitions"] >= 3 and on_cluster.stats["bytes_moved"] > 0
    assert on_cluster.stats["communication_rounds"] == in_process.stats["communication_rounds"]
    optimum, _ = exact_optimum(inline_pairs(spec, positive, negative, weights))
    answer = in_process.projected.objective
    assert in_process.projected.max_violation <= 1e-6
    assert optimum - 1e-7 <= answer <= optimum + 1e-4 * optimum
    assert in_process.stats["lower_bound"] <= optimum + 1e-7
    unweighted, _ = exact_optimum(inline_pairs(spec, positive, negative, None))
    assert abs(unweighted - optimum) > 0.05 * optimum


@settings(max_examples=10, deadline=None)
@given(counts=st.lists(st.integers(0, 3), min_size=40, max_size=40).filter(any),
       form=st.sampled_from(["npy", "inline"]))
def test_integer_weights_value_a_point_as_the_pairs_repeated(counts, form):
    """f(w) through the partitions' map-reduce equals the objective of every pair repeated
    by its weight; every pair sampled carries its weight of mean one, and the §8.1 column
    counts are the weighted ones of the pairs in memory."""
    positive, negative = tables(40, seed=len(counts) + sum(counts))
    points = np.random.default_rng(sum(counts)).normal(size=(3, positive.shape[1]))
    data = data_settings()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        spec = pair_spec(directory, "npy", positive=positive, negative=negative)
        spec["objective"]["data"]["weights"] = counts
        if form == "npy":
            spec = weights_file(spec, directory)
        model = parse_spec(spec)
        plan = plan_pairs(model, [directory], 9, data)
        assert len(plan.ranges) >= 4
        with open_pairs(plan, 0, None, 0, data) as batch:
            rowless = compile_problem(model, DataSource([directory], data),
                                      width_elsewhere=batch.d)
            partitioned = batch.values(points, problem_arrays(rowless, 1))
            every_row = batch.round_sample(0, batch.n)
            frequency = batch.inverse_frequency
    weighted = inline_pairs(spec, positive, negative, counts)
    copies = problem_arrays(compile_problem(parse_spec(repeated(weighted)),
                                            DataSource([], data)), 1)
    for k, w in enumerate(points):
        assert partitioned[k] == pytest.approx(objective_value(copies, w), rel=1e-12)
    assert every_row.weights == pytest.approx(np.asarray(counts) * 40 / sum(counts), rel=1e-12)
    in_memory = compile_problem(parse_spec(weighted), DataSource([], data))
    expected = InProcessBatch(in_memory, SvrgOptions(workers=0), 0).inverse_frequency
    np.testing.assert_allclose(frequency, expected, rtol=1e-12)


def test_weighted_pairs_count_their_weights_in_each_workers_memory(tmp_path):
    spec = pair_spec(tmp_path, "npy", n=1000)
    plain = plan_pairs(parse_spec(spec), [tmp_path], 250, data_settings())
    spec["objective"]["data"]["weights"] = [1.0] * 1000
    weighted = plan_pairs(parse_spec(weights_file(spec, tmp_path)), [tmp_path], 250,
                          data_settings())
    assert weighted.size - plain.size == (tmp_path / "w.npy").stat().st_size
    worker = pair_memory(weighted, 8, 100, 2).worker_bytes
    assert worker - pair_memory(plain, 8, 100, 2).worker_bytes == WEIGHT_BYTES * 500


def test_bad_pair_weights_are_refused_naming_the_field_the_row_and_the_file(tmp_path):
    spec = pair_spec(tmp_path, "npy", n=200, iterations=1000)
    assert_bad_weights_refused(spec, tmp_path, np.ones(200), "objective.data.positive")


def test_pair_weights_that_cannot_be_read_in_ranges_arerefused_with(tmp_path):
    spec = pair_spec(tmp_path, "npy", n=200, iterations=1000)
    as_csv, _ = assert_unrangeable_weights_refused(spec, tmp_path, np.ones(200))
    # read in one process, the same weights are taken as they always were
    as_csv["solver"].pop("workers")
    assert solve(as_csv, roots=[tmp_path]).projected.status == "optimal"
