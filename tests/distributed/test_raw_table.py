"""A calibrated model's pointwise raw parquet table read in partitions: each partition's
feature rows and labels against the in-memory lowering's (the calibration fitted from a
sample round that keeps every row), the same bits on 0 and 2 workers, the answer against
the in-memory path's exact optimum (exact_conic on the lowered problem), the placement past
the budget, and bad input named by table, column and global row."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lighttouch
from tests.data.helpers import isolated_data_cache
from tests.distributed.budget import (
    assert_refused_without_a_scheduler,
    assert_within_the_budget_as_before,
)
from worker.distributed.chunks import read_chunk
from worker.distributed.executors import LocalExecutor
from worker.distributed.raw_tables import fitted_transform, plan_table
from worker.errors import DataError
from worker.pipeline.validate import place_spec, summarize_spec
from worker.problem.compile import DataSource
from worker.settings import DataSettings, budgeted_settings, data_settings
from worker.spec.models import parse_spec
from worker.tables.lower import lower_tables

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)


def raw_rows(n: int, seed: int = 0) -> dict:
    """A raw table of ``n`` rows: ``rating`` and ``distance`` numeric, ``venue``
    categorical, whose fourth category (``"tavern"``) only the last row holds, so only the
    last partition sees it, and ``outcome`` ``"yes"`` more often for a high rating."""
    rng = np.random.default_rng(seed)
    rating, distance = rng.uniform(1, 5, n), rng.exponential(4, n)
    venue = rng.choice(["cafe", "bar", "diner"], n).astype(object)
    venue[-1] = "tavern"
    score = rating - 3 - 0.1 * distance + rng.logistic(0, 0.7, n)
    outcome = np.where(score > 0, "yes", "no").astype(object)
    return {"rating": rating, "distance": distance, "venue": venue, "outcome": outcome}


def table_spec(directory, n: int = 2400, *, workers: int | str = 0, iterations: int = 20_000,
               rows: dict | None = None, model: str = "calibrated_lattice") -> dict:
    """A calibrated model with logistic loss on a raw parquet table written under
    ``directory`` (row groups of 97 rows), solved by ``svrg_ol`` in partitions of 700
    rows on ``workers``."""
    path = directory / "table.parquet"
    pq.write_table(pa.table(rows or raw_rows(n)), path, row_group_size=97)
    features = [{"column": "rating", "monotonic": "increasing"},
                {"column": "distance", "keypoints": [0, 10], "monotonic": "decreasing"},
                {"column": "venue", "categories": "auto"}]
    shape = {"calibrated_lattice": {"lattice": {"sizes": [3, 2, 4]}},
             "calibrated_linear": {}}[model]
    data = {"table": {"uri": path.as_uri(), "format": "parquet"},
            "label": {"column": "outcome", "positive": ["yes"]}}
    return {"bounds": {"lower": -4, "upper": 4},
            "model": {"type": model, "features": features, **shape},
            "objective": {"type": "empirical_risk", "loss": "logistic", "data": data},
            "solver": {"algorithm": "svrg_ol", "iterations": iterations, "seed": 3,
                       "svrg": {"partition_rows": 700, "workers": workers}}}


def in_memory_lowering(spec: dict, root):
    """The in-memory lowering of ``spec`` (its table read whole)."""
    return lower_tables(parse_spec(spec), DataSource([root], data_settings()))


@pytest.mark.parametrize("model", ["calibrated_lattice", "calibrated_linear"])
def test_every_row_sampled_gives_the_in_memory_calibration_feature_rows_and_labels(
        tmp_path, model):
    spec = table_spec(tmp_path, model=model)
    parsed = parse_spec(spec)
    plan, tables = plan_table(parsed, [tmp_path], 700, DataSettings())
    transform = fitted_transform(parsed, tables, LocalExecutor(), 3, DataSettings())
    lowered = in_memory_lowering(spec, tmp_path)
    assert transform.describe(None) == lowered.model.describe(None)
    assert "tavern" in transform.calibrators[2].categories
    plan = replace(plan, transform=transform)
    chunks = [read_chunk(plan, k, DataSettings()) for k in range(len(plan.pieces))]
    assert len(chunks) == 4 and {c.features.shape[1] for c in chunks} == {transform.d}
    arrays, data = lowered.source.arrays, lowered.spec.objective.data
    rows = np.vstack([c.features.toarray() for c in chunks])
    np.testing.assert_array_equal(rows, arrays[data.features.uri].toarray())
    np.testing.assert_array_equal(np.concatenate([c.labels for c in chunks]),
                                  arrays[data.labels.uri])


def test_same_bits_on_zero_and_two_workers_near_the_exact_optimum(tmp_path, cluster,
                                                                  monkeypatch):
    spec = table_spec(tmp_path, iterations=60_000)
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    answers = {w: lighttouch.solve(spec | {"solver": spec["solver"] | {
        "svrg": {"partition_rows": 700, "workers": w}}}) for w in (0, 2)}
    assert answers[0].projected.solution == answers[2].projected.solution
    assert [m.solution for m in answers[0].mixture] == [m.solution for m in answers[2].mixture]
    assert answers[0].stats["placement"] == "in_process"
    assert answers[2].stats["placement"] == "cluster"
    assert answers[0].algorithm == answers[2].algorithm == "svrg_ol"
    in_memory = lighttouch.solve(spec | {"solver": spec["solver"] | {"algorithm": "auto"}})
    assert answers[0].model == in_memory.model and in_memory.algorithm == "exact_conic"
    optimum = in_memory.projected.objective
    assert answers[0].feasibility.feasible and answers[0].projected.max_violation <= 1e-6
    assert optimum - 1e-6 <= answers[0].projected.objective <= optimum * 1.01


def test_over_the_budget_auto_fits_and_reads_the_table_on_the_cluster(tmp_path, cluster,
                                                                      monkeypatch):
    spec = table_spec(tmp_path, n=6000, iterations=4000)
    spec["solver"].update(algorithm="auto", svrg={"partition_rows": 1500})
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    budget = 2_000_000
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(budget))
    summary = summarize_spec(spec, max_job_bytes=budget)
    submitted = place_spec(spec, settings=budgeted_settings())
    routed = lighttouch.solve(spec)
    assert summary["placement"]["where"] == routed.stats["placement"] == "cluster"
    assert submitted["where"] == "cluster" and "Dask" in submitted["reason"]
    assert summary["placement"]["in_process_bytes"] > budget > summary["memory_estimate_bytes"]
    assert "LIGHTTOUCH_DASK_SCHEDULER" in routed.stats["method_reason"]
    assert routed.model.type == "calibrated_lattice" and routed.stats["batch_workers"] == 2
    assert routed.feasibility.feasible


def test_over_the_budget_without_a_scheduler_every_entry_point_refuses(tmp_path, monkeypatch):
    spec = table_spec(tmp_path, n=6000)
    spec["solver"]["algorithm"] = "auto"
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    assert_refused_without_a_scheduler(spec, tmp_path, 2_000_000, monkeypatch,
                                       "a calibrated model's table in parquet")


def test_within_the_budget_the_table_is_lowered_in_memory_as_before(tmp_path, monkeypatch):
    spec = table_spec(tmp_path, workers="auto", iterations=3000)
    spec["solver"]["algorithm"] = "auto"
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.delenv("LIGHTTOUCH_DASK_SCHEDULER", raising=False)
    assert_within_the_budget_as_before(spec, tmp_path, monkeypatch)


@pytest.mark.parametrize(("column", "workers"), [("rating", 0), ("distance", 2)])
def test_a_bad_value_names_its_table_column_and_global_row(tmp_path, cluster, monkeypatch,
                                                          column, workers):
    """rating's keypoints are fitted from the sample, distance's are given."""
    rows = raw_rows(2400)
    rows[column][1777] = np.nan
    spec = table_spec(tmp_path, workers=workers, rows=rows)
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    with pytest.raises(DataError) as raised:
        lighttouch.solve(spec)
    assert raised.value.path == "objective.data.table"
    assert f"column {column!r} row 1777 is nan" in raised.value.message


@pytest.mark.parametrize("workers", [0, 2])
def test_a_label_column_whose_positive_values_label_no_row_is_refused_as_in_memory(
        tmp_path, cluster, monkeypatch, workers):
    spec = table_spec(tmp_path, workers=workers, iterations=3000)
    spec["objective"]["data"]["label"]["positive"] = ["Yes", "y"]
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    with pytest.raises(DataError) as partitioned:
        lighttouch.solve(spec)
    with pytest.raises(DataError) as in_memory:
        lighttouch.solve(spec | {"solver": spec["solver"] | {"algorithm": "auto"}})
    assert str(partitioned.value) == str(in_memory.value)
    assert partitioned.value.path == "objective.data.label"
    assert "no row of column 'outcome' holds one of ['Yes', 'y']" in partitioned.value.message
