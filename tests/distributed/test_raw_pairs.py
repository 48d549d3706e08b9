"""A calibrated model's raw pair tables read in partitions: the calibration fitted from a
sample round (the in-memory one while every row is sampled, the same sample in this process
and on a real Dask LocalCluster), each partition's feature rows against the in-memory
lowering's, the same bits on 0 and 2 workers, the answer against the in-memory path and the
exact optimum (CVXPY), the placement past the budget, and bad input named by table, column
and global row."""

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
from tests.distributed.test_pairs import dense
from tests.specs import exact_optimum
from worker import solve
from worker.distributed.executors import DaskExecutor, LocalExecutor
from worker.distributed.pairs import pair_part, plan_pairs
from worker.distributed.raw_tables import RawTables, fitted_transform
from worker.errors import DataError
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource
from worker.settings import DataSettings, data_settings
from worker.spec.models import parse_spec
from worker.tables.lower import lower_tables

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

#: Rows of the sample the tests' small sample rounds keep at most.
SMALL_SAMPLE = 500


def raw_sides(n: int, seed: int = 0) -> tuple[dict, dict]:
    """Two raw tables of ``n`` rows (the positive side scores higher on ``rating``):
    ``rating`` and ``distance`` numeric, ``venue`` categorical, whose fourth category
    (``"tavern"``) only the negative table's last row holds, so only the last partition
    sees it."""
    rng = np.random.default_rng(seed)

    def side(shift: float) -> dict:
        return {"rating": rng.uniform(1, 5, n) + shift, "distance": rng.exponential(4, n),
                "venue": rng.choice(["cafe", "bar", "diner"], n).astype(object)}
    positive, negative = side(0.6), side(0.0)
    negative["venue"][-1] = "tavern"
    return positive, negative


def raw_spec(directory, n: int = 2400, *, workers: int | None = 0, iterations: int = 20_000,
             sides: tuple[dict, dict] | None = None, model: str = "calibrated_lattice") -> dict:
    """A calibrated model on raw parquet pair tables written under ``directory`` (row
    groups of 97 and 130 rows, so partitions align by rows), partitions of 700 rows."""
    positive, negative = sides or raw_sides(n)
    data = {}
    for name, columns, group_rows in (("positive", positive, 97), ("negative", negative, 130)):
        path = directory / f"{name}.parquet"
        pq.write_table(pa.table(columns), path, row_group_size=group_rows)
        data[name] = {"uri": path.as_uri()}
    features = [{"column": "rating", "monotonic": "increasing"},
                {"column": "distance", "keypoints": [0, 10], "monotonic": "decreasing"},
                {"column": "venue", "categories": "auto"}]
    shape = {"calibrated_lattice": {"lattice": {"sizes": [3, 2, 4]}},
             "calibrated_linear": {}}[model]
    solver = {"algorithm": "lighttouch", "iterations": iterations, "seed": 3,
              "svrg": {"partition_rows": 700}}
    if workers is not None:
        solver["workers"] = workers
    return {"bounds": {"lower": -4, "upper": 4},
            "model": {"type": model, "features": features, **shape},
            "objective": {"type": "empirical_risk", "loss": "pairwise_hinge", "data": data},
            "solver": solver}


def in_memory_lowering(spec: dict, root):
    """The in-memory lowering of ``spec`` (its tables read whole)."""
    return lower_tables(parse_spec(spec), DataSource([root], data_settings()))


def lowered_inline(spec: dict, root, weights: np.ndarray | None = None) -> dict:
    """The hand-built spec of ``spec``'s in-memory lowering with its pairs' feature rows
    inline (and ``weights``, when given), for CVXPY."""
    lowered = in_memory_lowering(spec, root)
    arrays, data = lowered.source.arrays, lowered.spec.objective.data
    pairs = {"positive": arrays[data.positive.uri].toarray().tolist(),
             "negative": arrays[data.negative.uri].toarray().tolist()}
    if weights is not None:
        pairs["weights"] = np.asarray(weights).tolist()
    return {"dimension": lowered.model.d, "bounds": spec["bounds"],
            "objective": {"type": "empirical_risk", "loss": "pairwise_hinge", "data": pairs},
            "constraints": [c.model_dump(exclude_none=True) for c in lowered.spec.constraints]}


@pytest.mark.parametrize("model", ["calibrated_lattice", "calibrated_linear"])
def test_every_row_sampled_gives_the_in_memory_calibration_and_feature_rows(tmp_path, model):
    spec = raw_spec(tmp_path, model=model, sides=raw_sides(2400))
    parsed = parse_spec(spec)
    plan = plan_pairs(parsed, [tmp_path], 700, DataSettings())
    tables = RawTables.of_pairs(plan)
    transform = fitted_transform(parsed, tables, LocalExecutor(), 3, DataSettings())
    lowered = in_memory_lowering(spec, tmp_path)
    assert transform.describe(None) == lowered.model.describe(None)
    assert "tavern" in transform.calibrators[2].categories
    plan = replace(plan, transform=transform)
    parts = [pair_part(plan, k, DataSettings()) for k in range(len(plan.ranges))]
    assert len(parts) == 4 and {p.width for p in parts} == {transform.d}
    rows = np.vstack([dense(p.rows, transform.d) for p in parts])
    arrays = lowered.source.arrays
    expected = (arrays[lowered.spec.objective.data.positive.uri]
                - arrays[lowered.spec.objective.data.negative.uri]).toarray()
    np.testing.assert_allclose(rows, expected, rtol=0, atol=1e-15)


def listed_calibration(spec: dict) -> dict:
    """``spec`` (of :func:`raw_spec`) with every keypoint and category listed, so its
    calibration reads no row."""
    spec["model"]["features"][0]["keypoints"] = [1, 3, 6]
    spec["model"]["features"][2]["categories"] = ["bar", "cafe", "diner", "tavern"]
    return spec


def test_a_model_whose_keypoints_and_categories_are_listed_reads_no_sample(tmp_path):
    spec = listed_calibration(raw_spec(tmp_path))
    parsed = parse_spec(spec)
    plan = plan_pairs(parsed, [tmp_path], 700, DataSettings())
    tables = RawTables.of_pairs(plan)
    lowered = in_memory_lowering(spec, tmp_path)
    for side in ("positive", "negative"):
        (tmp_path / f"{side}.parquet").unlink()
    transform = fitted_transform(parsed, tables, LocalExecutor(), 3, DataSettings())
    assert transform.describe(None) == lowered.model.describe(None)


def test_a_sample_is_the_same_in_this_process_and_on_two_workers(tmp_path, cluster):
    from distributed import Client

    parsed = parse_spec(raw_spec(tmp_path, n=6000))
    plan = plan_pairs(parsed, [tmp_path], 700, DataSettings())
    tables = RawTables.of_pairs(plan)
    here = fitted_transform(parsed, tables, LocalExecutor(), 3, DataSettings(),
                            SMALL_SAMPLE)
    with Client(cluster) as client:
        there = fitted_transform(parsed, tables, DaskExecutor(client, 60.0), 3,
                                 DataSettings(), SMALL_SAMPLE)
    assert here.describe(None) == there.describe(None)
    every_row = fitted_transform(parsed, tables, LocalExecutor(), 3, DataSettings())
    sampled, exact = here.calibrators[0].keypoints, every_row.calibrators[0].keypoints
    assert not np.array_equal(sampled, exact)
    np.testing.assert_allclose(sampled, exact, atol=0.25)
    other_seed = fitted_transform(parsed, tables, LocalExecutor(), 4, DataSettings(),
                                  SMALL_SAMPLE)
    assert not np.array_equal(other_seed.calibrators[0].keypoints, sampled)


def test_same_bits_on_zero_and_two_workers_near_the_exact_optimum(tmp_path):
    spec = raw_spec(tmp_path, iterations=150_000)
    answers = {w: solve(spec | {"solver": spec["solver"] | {"workers": w}}, roots=[tmp_path])
               for w in (0, 2)}
    assert answers[0].projected.solution == answers[2].projected.solution
    assert [m.solution for m in answers[0].mixture] == [m.solution for m in answers[2].mixture]
    assert answers[0].stats["partitions"] == 4 and answers[2].stats["bytes_moved"] > 0
    in_memory = solve(spec | {"solver": spec["solver"] | {"workers": None}}, roots=[tmp_path])
    assert answers[0].model == in_memory.model
    optimum, _ = exact_optimum(lowered_inline(spec, tmp_path))
    for result in (answers[0], in_memory):
        assert result.feasibility.feasible and result.projected.max_violation <= 1e-6
        assert optimum - 1e-6 <= result.projected.objective <= optimum * 1.02


def test_over_the_budget_auto_fits_and_reads_the_tables_on_the_cluster(tmp_path, cluster,
                                                                       monkeypatch):
    spec = raw_spec(tmp_path, n=6000, workers=None, iterations=4000)
    spec["solver"].update(algorithm="auto", svrg={"partition_rows": 1500})
    asked = spec | {"solver": spec["solver"] | {"workers": 2}}
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    explicit = solve(asked, roots=[tmp_path])
    budget = 2_000_000
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(budget))
    summary = summarize_spec(spec, max_job_bytes=budget)
    routed = lighttouch.solve(spec)
    assert summary["placement"]["where"] == routed.stats["placement"] == "cluster"
    assert summary["placement"]["in_process_bytes"] > budget > summary["memory_estimate_bytes"]
    assert routed.algorithm == explicit.algorithm == "svrg_ol"
    assert "LIGHTTOUCH_DASK_SCHEDULER" in routed.stats["method_reason"]
    assert routed.model.type == "calibrated_lattice" and routed.stats["batch_workers"] == 2
    assert routed.projected.solution == explicit.projected.solution


def test_over_the_budget_without_a_scheduler_every_entry_point_refuses(tmp_path, monkeypatch):
    spec = raw_spec(tmp_path, n=6000, workers=None)
    spec["solver"]["algorithm"] = "auto"
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    assert_refused_without_a_scheduler(spec, tmp_path, 2_000_000, monkeypatch,
                                       "a calibrated model's in parquet")


def test_within_the_budget_the_tables_are_lowered_in_memory_as_before(tmp_path, monkeypatch):
    spec = raw_spec(tmp_path, workers=None, iterations=3000)
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.delenv("LIGHTTOUCH_DASK_SCHEDULER", raising=False)
    assert_within_the_budget_as_before(spec, tmp_path, monkeypatch)


@pytest.mark.parametrize(("column", "workers"), [("rating", 0), ("distance", 2)])
def test_a_bad_value_names_its_table_column_and_global_row(tmp_path, column, workers):
    """rating's keypoints are fitted from the sample, distance's are given."""
    positive, negative = raw_sides(2400)
    negative[column][1777] = np.nan
    spec = raw_spec(tmp_path, workers=workers, sides=(positive, negative))
    with pytest.raises(DataError) as raised:
        solve(spec, roots=[tmp_path])
    assert raised.value.path == "objective.data.negative"
    assert f"column {column!r} row 1777 is nan" in raised.value.message
