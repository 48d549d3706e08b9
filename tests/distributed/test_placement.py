"""Where a job runs (worker.distributed.placement): LIGHTTOUCH_MAX_JOB_BYTES holds the CLI and
lighttouch.solve as it holds the service; a job over it runs on the Dask cluster at
LIGHTTOUCH_DASK_SCHEDULER with svrg_ol (L-BFGS-B on a smooth loss whose only constraint is
the box) when auto chooses, or is refused naming the estimate,
the budget and the settings; the head estimate tracks the compiled problem's size."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from sklearn.datasets import dump_svmlight_file

import lighttouch
from tests.data.helpers import isolated_data_cache
from tests.distributed.budget import (
    assert_validated_for_the_cluster,
    assert_within_the_budget_as_before,
    refusals,
)
from worker import solve
from worker.distributed.head import plan_sizes
from worker.distributed.partitions import plan_files
from worker.errors import DataError, SpecError
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource, compile_problem
from worker.settings import DataSettings
from worker.spec.models import parse_spec

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

#: A budget under the examples' in-process estimate (about 10 MB) and over the driver's.
BUDGET = 4_000_000


@pytest.fixture
def data(tmp_path, monkeypatch):
    """20,000 examples of 8 features in svmlight, under the data roots, cut in about 7
    partitions."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(20_000, 8))
    y = np.sign(x @ rng.normal(size=8) + 0.3 * rng.normal(size=20_000))
    dump_svmlight_file(x, y, str(tmp_path / "train.svm"))
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "500000")
    return tmp_path


#: A linear constraint on the first two weights, so that ``auto`` runs SVRG OL (with none,
#: the box is the only constraint and L-BFGS-B runs).
ORDERED = {"type": "ordering", "chain": [0, 1]}


def spec_of(directory, algorithm: str = "auto", constraints: tuple = (ORDERED,),
            **svrg) -> dict:
    return {"objective": {"type": "empirical_risk", "loss": "logistic", "data": {
                "features": {"uri": (directory / "train.svm").as_uri()}}},
            "bounds": {"lower": -1, "upper": 1}, "constraints": list(constraints),
            "solver": {"algorithm": algorithm, "iterations": 4000, "seed": 5,
                       **({"svrg": svrg} if svrg else {})}}


def test_a_job_within_the_budget_runs_in_process_as_before(data, monkeypatch):
    assert_within_the_budget_as_before(spec_of(data), data, monkeypatch)


def assert_names_the_way_out(message: str) -> None:
    assert "in-process estimate" in message and f"{BUDGET:,} bytes" in message
    assert "LIGHTTOUCH_MAX_JOB_BYTES" in message and "LIGHTTOUCH_DASK_SCHEDULER" in message
    assert "svrg_ol (or auto; with rates, auto or a game with solver.workers) on " \
        "pointwise losses or a rate objective with examples in files" in message


def test_over_the_budget_without_a_scheduler_the_cli_and_the_api_refuse(data, monkeypatch):
    for message in refusals(spec_of(data), data, BUDGET, monkeypatch):
        assert "objective.data" in message
        assert_names_the_way_out(message)
    with pytest.raises(SpecError, match="solver.svrg.workers is 0"):
        lighttouch.solve(spec_of(data, "svrg_ol", workers=0))


def test_over_the_budget_auto_runs_svrg_ol_on_the_cluster(data, cluster, monkeypatch):
    in_process = solve(spec_of(data, "svrg_ol", workers=0))
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    summary = summarize_spec(spec_of(data), max_job_bytes=BUDGET)
    on_cluster = lighttouch.solve(spec_of(data))
    placement = summary["placement"]
    assert_validated_for_the_cluster(summary, cluster.scheduler_address, BUDGET)
    stats = on_cluster.stats
    assert on_cluster.algorithm == stats["method"] == "svrg_ol"
    assert stats["placement"] == "cluster" and stats["batch_workers"] == 2
    assert "LIGHTTOUCH_DASK_SCHEDULER" in stats["method_reason"]
    assert stats["worker_bytes_estimate"] == max(placement["worker_bytes"])
    assert on_cluster.projected.solution == in_process.projected.solution
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]


def test_over_the_budget_auto_runs_lbfgsb_on_the_cluster_for_a_box_only_smooth_loss(
        data, cluster, monkeypatch):
    """Each L-BFGS-B evaluation is one pass over the partitions: the answer of the
    in-memory L-BFGS-B, certified, and the same bits in the service's validate and solve."""
    in_memory = solve(spec_of(data, "lbfgsb", constraints=()))
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    summary = summarize_spec(spec_of(data, constraints=()), max_job_bytes=BUDGET)
    on_cluster = lighttouch.solve(spec_of(data, constraints=()))
    assert_validated_for_the_cluster(summary, cluster.scheduler_address, BUDGET, "lbfgsb")
    stats = on_cluster.stats
    assert on_cluster.algorithm == stats["method"] == "lbfgsb"
    assert "L-BFGS-B" in stats["method_reason"] and "LIGHTTOUCH_DASK_SCHEDULER" in \
        stats["method_reason"]
    assert stats["placement"] == "cluster" and stats["batch_workers"] == 2
    assert stats["communication_rounds"] >= stats["evaluations"] > 3
    assert stats["certificate"] == "lagrangian_bound"
    assert stats["relative_gap"] <= 1e-4 and in_memory.stats["relative_gap"] <= 1e-4
    np.testing.assert_allclose(on_cluster.projected.solution, in_memory.projected.solution,
                               atol=1e-4)
    assert abs(on_cluster.expected.objective - in_memory.expected.objective) <= \
        1e-6 * in_memory.expected.objective


def test_an_algorithm_that_reads_every_example_is_refused_over_the_budget(data, cluster,
                                                                          monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    with pytest.raises(SpecError, match="solver.algorithm lbfgsb reads every example"):
        lighttouch.solve(spec_of(data, "lbfgsb", constraints=()))


def test_explicit_workers_without_a_scheduler_keep_the_local_cluster(data, monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))
    monkeypatch.delenv("LIGHTTOUCH_DASK_SCHEDULER", raising=False)
    summary = summarize_spec(spec_of(data, "svrg_ol", workers=1), max_job_bytes=BUDGET)
    assert summary["placement"]["where"] == "local_cluster"
    assert len(summary["placement"]["worker_bytes"]) == 1


def _tables(directory, x: np.ndarray, y: np.ndarray) -> dict:
    """The examples in each splittable layout: lines (svmlight, csv), row groups, npy."""
    dump_svmlight_file(x, y, str(directory / "d.svm"))
    table = pa.table({**{f"x{j}": x[:, j] for j in range(x.shape[1])}, "y": y})
    pa_csv.write_csv(table, directory / "d.csv")
    pq.write_table(table, directory / "d.parquet", row_group_size=900)
    np.save(directory / "x.npy", x)
    np.save(directory / "y.npy", y)
    uri = {name: (directory / name).as_uri() for name in ("d.svm", "d.csv", "d.parquet",
                                                          "x.npy", "y.npy")}
    return {"svmlight": {"features": {"uri": uri["d.svm"]}},
            "csv": {"features": {"uri": uri["d.csv"], "label_column": "y"}},
            "parquet": {"features": {"uri": uri["d.parquet"], "label_column": "y"}},
            "npy": {"features": {"uri": uri["x.npy"]}, "labels": {"uri": uri["y.npy"]}}}


def test_the_head_estimate_tracks_the_compiled_examples(tmp_path):
    rng = np.random.default_rng(7)
    x = np.round(rng.normal(size=(40_000, 6)) * (rng.uniform(size=(40_000, 6)) < 0.7), 3)
    y = rng.choice([-1.0, 1.0], size=40_000)
    for layout, data in _tables(tmp_path, x, y).items():
        spec = parse_spec({"objective": {"type": "empirical_risk", "loss": "logistic",
                                         "data": data}})
        plan = plan_files(spec, [tmp_path], 5000, 2**18, DataSettings())
        sizes = plan_sizes(plan, DataSettings())
        objective = compile_problem(spec, DataSource([tmp_path], DataSettings())).objective
        assert abs(sizes.n - objective.n) <= 0.05 * objective.n, layout
        assert abs(sizes.entries - objective.features.nnz) <= 0.05 * objective.features.nnz, \
            layout
        assert sizes.partition_entries < sizes.entries, layout


def test_bad_values_on_the_cluster_name_the_global_row_and_column(data, cluster, monkeypatch):
    lines = (data / "train.svm").read_text().splitlines()
    label, *entries = lines[15_001].split()
    entries[3] = "3:nan"                            # column 3 of global row 15,001
    lines[15_001] = " ".join([label, *entries])
    (data / "train.svm").write_text("\n".join(lines) + "\n")
    x = np.arange(60.0).reshape(20, 3)
    pa_csv.write_csv(pa.table({"x0": x[:, 0], "x1": x[:, 1], "z": np.sign(x[:, 2] - 30)}),
                     data / "unlabelled.csv")
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    with pytest.raises(DataError, match=r"row 15001 column 3 is nan"):
        lighttouch.solve(spec_of(data))
    unlabelled = spec_of(data, "svrg_ol", workers=2)
    unlabelled["objective"]["data"]["features"] = {
        "uri": (data / "unlabelled.csv").as_uri(), "label_column": "y"}
    with pytest.raises(DataError, match="label_column names column 'y', which the file does "
                                        "not have; its columns are 'x0', 'x1', 'z'"):
        lighttouch.solve(unlabelled)
