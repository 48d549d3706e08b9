"""The service places a job as the CLI does: POST /v1/validate says where a job over
LIGHTTOUCH_MAX_JOB_BYTES runs and why, and a worker runs it on the Dask cluster at
LIGHTTOUCH_DASK_SCHEDULER with svrg_ol (real redis-server, API, worker and LocalCluster)."""

from __future__ import annotations

from collections.abc import Iterator

import distributed
import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from tests.local_stack import RedisServer, Stack
from tests.service.conftest import submit, wait_status

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
    assert placement["where"] == "cluster" and summary.json()["algorithm"] == "svrg_ol"
    assert placement["in_process_bytes"] > BUDGET == placement["max_job_bytes"]
    assert len(placement["worker_bytes"]) == 2
    stats = result["stats"]
    assert stats["placement"] == "cluster" and stats["method"] == "svrg_ol"
    assert stats["in_process_bytes_estimate"] == placement["in_process_bytes"]
    assert "LIGHTTOUCH_DASK_SCHEDULER" in stats["method_reason"]
