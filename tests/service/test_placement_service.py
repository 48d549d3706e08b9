"""The service places a job as the CLI does: POST /v1/validate says where a job over
LIGHTTOUCH_MAX_JOB_BYTES runs and why, and a worker runs it on the Dask cluster at
LIGHTTOUCH_DASK_SCHEDULER (a box-only logistic fit: L-BFGS-B, each evaluation a pass over the
partitions); without a scheduler, POST /v1/jobs (and lighttouch
submit) refuses such a job with the placement's message and queues nothing (real
redis-server, API, worker and LocalCluster)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import distributed
import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from tests.distributed.test_pairs import pair_spec
from tests.distributed.test_pairs_placement import auto_pairs
from tests.distributed.test_raw_pairs import raw_spec
from tests.local_stack import KEYS, RedisServer, Stack
from tests.service.conftest import problem, submit, wait_status
from tests.service.test_cli import lighttouch

#: Under the examples' in-process estimate (about 10 MB), over the driver's.
BUDGET = 4_000_000


@pytest.fixture(scope="module")
def placing_service(redis_server: RedisServer, tmp_path_factory) -> Iterator[tuple[Stack, str]]:
    """An API and a worker under a 4 MB per-job budget, pointed at a LocalCluster; and the
    data directory (database 7)."""
    data = tmp_path_factory.mktemp("placement-data")
    rng = np.random.default_rng(4)
    x = rng.normal(size=(20_000, 8))
    dump_svmlight_file(x, np.sign(x @ rng.normal(size=8) + 0.3 * rng.normal(size=20_000)),
                       str(data / "train.svm"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        stack = Stack(redis_server.url(7), tmp_path_factory.mktemp("placement"),
                      {"LIGHTTOUCH_MAX_JOB_BYTES": str(BUDGET),
                       "LIGHTTOUCH_DATA_ROOTS": str(data),
                       "LIGHTTOUCH_PARTITION_BYTES": "500000",
                       "LIGHTTOUCH_VALIDATE_TIMEOUT_S": "300",
                       "LIGHTTOUCH_DASK_SCHEDULER": cluster.scheduler_address})
        stack.start_api()
        stack.start_worker()
        try:
            yield stack, (data / "train.svm").as_uri()
        finally:
            stack.close()


def test_a_job_over_the_budget_is_placed_on_the_cluster(placing_service):
    stack, uri = placing_service
    spec = {"objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": {"uri": uri}}},
            "bounds": {"lower": -1, "upper": 1}, "solver": {"iterations": 4000, "seed": 5}}
    with stack.client() as client:
        summary = client.post("/v1/validate", json=spec, timeout=300)  # a census round
        job_id = submit(client, spec)
        wait_status(client, job_id, {"succeeded", "failed"}, timeout_s=600)
        result = client.get(f"/v1/jobs/{job_id}/result").json()
    assert summary.status_code == 200, summary.text
    placement = summary.json()["placement"]
    assert placement["where"] == "cluster" and summary.json()["algorithm"] == "lbfgsb"
    assert placement["in_process_bytes"] > BUDGET == placement["max_job_bytes"]
    assert len(placement["worker_bytes"]) == 2
    stats = result["stats"]
    assert stats["placement"] == "cluster" and stats["method"] == "lbfgsb"
    assert stats["in_process_bytes_estimate"] == placement["in_process_bytes"]
    assert "LIGHTTOUCH_DASK_SCHEDULER" in stats["method_reason"]


@pytest.fixture(scope="module")
def refusing_service(redis_server: RedisServer, tmp_path_factory) -> Iterator[tuple[Stack, str]]:
    """An API without workers or a Dask scheduler under a 4 MB per-job budget (database 8);
    and its data directory."""
    data = tmp_path_factory.mktemp("refusing-data")
    stack = Stack(redis_server.url(8), tmp_path_factory.mktemp("refusing"),
                  {"LIGHTTOUCH_MAX_JOB_BYTES": str(BUDGET), "LIGHTTOUCH_DATA_ROOTS": str(data),
                   "LIGHTTOUCH_DASK_SCHEDULER": ""})
    stack.start_api()
    try:
        yield stack, data
    finally:
        stack.close()


def test_a_job_over_the_budget_with_nowhere_to_run_is_refused_at_submit(refusing_service,
                                                                         tmp_path):
    stack, data = refusing_service
    over = auto_pairs(data)                          # about 6.4 MB in one process
    (tmp_path / "spec.json").write_text(json.dumps(over))
    with stack.client() as client:
        refused = problem(client.post("/v1/jobs", json=over), 422)
        validated = problem(client.post("/v1/validate", json=over), 422)
        listed = client.get("/v1/jobs").json()["jobs"]
    cli = lighttouch("submit", "spec.json", "--url", stack.url, "--api-key", KEYS["alpha"],
                     cwd=tmp_path)
    message = refused["errors"][0]
    assert message["path"] == "objective.data"
    assert f"per-job budget of 0.00 GiB ({BUDGET:,} bytes" in message["message"]
    assert "no LIGHTTOUCH_DASK_SCHEDULER is set" in message["message"]
    assert validated["errors"] == refused["errors"]
    assert listed == []
    assert cli.returncode == 1 and "HTTP 422" in cli.stderr
    assert "objective.data: the job would hold" in " ".join(cli.stderr.split())


def test_a_calibrated_model_on_raw_pairs_over_the_budget_is_refused_from_the_footers(
        refusing_service):
    stack, data = refusing_service
    over = raw_spec(data, n=6000, workers=None)  # about 9 MB in one process
    over["solver"]["algorithm"] = "auto"
    with stack.client() as client:
        refused = problem(client.post("/v1/jobs", json=over), 422)
        listed = client.get("/v1/jobs").json()["jobs"]
    message = refused["errors"][0]
    assert message["path"] == "objective.data" and listed == []
    assert "no LIGHTTOUCH_DASK_SCHEDULER is set" in message["message"]
    assert "a calibrated model's in parquet" in message["message"]


def test_a_job_within_the_budget_is_queued_after_a_short_check(refusing_service):
    stack, data = refusing_service
    within = pair_spec(data, "npy", 600, workers=None)   # files: placed from their headers
    with stack.client() as client:
        submit(client, within)                           # the fork server starts
        started = time.perf_counter()
        job_id = submit(client, within)
        took = time.perf_counter() - started
        queued = client.get(f"/v1/jobs/{job_id}").json()
    assert queued["status"] == "queued"
    assert took < 5, took
