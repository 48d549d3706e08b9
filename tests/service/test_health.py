"""Liveness, readiness (Redis and a live worker, "warming up" before), a starting worker's
log, and Prometheus metrics."""

from __future__ import annotations

import re

import httpx
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from tests.local_stack import (
    WORKER_START_S,
    RedisServer,
    Stack,
    free_port,
    small_spec,
    wait_for,
)
from tests.service.conftest import problem, submit, wait_status
from tests.service.stacks import api_stack

WARMING_DATABASE = 10


def test_readiness_needs_a_live_worker(service: Stack, idle_service: Stack):
    with service.client(None) as ready, idle_service.client(None) as idle:
        assert ready.get("/healthz").json() == {"status": "ok", "workers": None,
                                                 "api_key_required": True}
        assert ready.get("/readyz").json() == {"status": "ready", "workers": 1,
                                               "api_key_required": True}
        assert idle.get("/healthz").status_code == 200
        assert "no worker" in problem(idle.get("/readyz"), 503)["detail"]


def test_metrics_report_queue_jobs_durations_and_http_latency(service: Stack):
    with service.client() as client:
        wait_status(client, submit(client, small_spec()), {"succeeded"})
        text = client.get("/metrics").text
    samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for family in text_string_to_metric_families(text) for sample in family.samples}

    assert samples[("lighttouch_jobs_ended_total", (("status", "succeeded"),))] >= 1
    assert samples[("lighttouch_job_duration_seconds_count", ())] >= 1
    assert samples[("lighttouch_job_duration_seconds_bucket", (("le", "+Inf"),))] >= 1
    assert ("lighttouch_queue_depth", ()) in samples
    assert ("lighttouch_jobs_running", ()) in samples
    assert samples[("lighttouch_workers_alive", ())] == 1
    submits = [value for (name, labels), value in samples.items()
               if name == "lighttouch_http_request_duration_seconds_count"
               and ("route", "/v1/jobs") in labels and ("method", "POST") in labels]
    assert submits and submits[0] >= 1


def test_requests_while_redis_is_down_are_503(tmp_path):
    stack = Stack(f"redis://127.0.0.1:{free_port()}/0", tmp_path)   # nobody listens there
    stack.start_api()
    try:
        with stack.client() as client:
            listing = problem(client.get("/v1/jobs"), 503)
            submitting = problem(client.post("/v1/jobs", json=small_spec()), 503)
            ready = problem(client.get("/readyz"), 503)
    finally:
        stack.stop_api()
    assert "Redis" in listing["detail"] and "Redis" in submitting["detail"]
    assert "unreachable" in ready["detail"]


def readiness(stack: Stack) -> tuple[int, str]:
    """``/readyz``'s status code and its problem's title (``ready`` when it is 200)."""
    answer = httpx.get(f"{stack.url}/readyz", timeout=10)
    return answer.status_code, answer.json().get("title", answer.json().get("status"))


def test_a_starting_worker_says_at_once_it_warms_up_and_readiness_says_so(
        redis_server: RedisServer, tmp_path):
    with api_stack(redis_server, tmp_path, WARMING_DATABASE,
                   {"LIGHTTOUCH_DATA_ROOTS": str(tmp_path)}) as stack:
        worker = stack.lighttouch("worker", log="worker.log")
        stack.workers.append(worker)
        log = tmp_path / "worker.log"
        warming = wait_for(lambda: (r := readiness(stack)) != (503, "Service not ready") and r,
                           60, "a readiness other than 'no worker'")
        said = log.read_text()
        wait_for(lambda: readiness(stack) == (200, "ready"), WORKER_START_S, "a ready worker")
        np.save(tmp_path / "rows.npy", np.ones((3, 2)))   # two columns, dimension four
        spec = {"dimension": 4, "objective": {
            "type": "empirical_risk", "loss": "hinge",
            "data": {"features": {"uri": (tmp_path / "rows.npy").as_uri()},
                     "labels": [1.0, -1.0, 1.0]}}}
        with stack.client() as client:
            failed = wait_status(client, submit(client, spec), {"failed"}, timeout_s=60)
        wait_for(lambda: failed["id"] in log.read_text(), 10, "the failure in the worker's log")
        told = log.read_text()
    assert warming == (503, "Workers warming up")
    kernels = re.search(r"warming up (\d+) numba kernels", said)
    assert kernels and int(kernels[1]) > 50, said
    assert re.search(r"ready in \d+\.\d s", told), told
    # the spec's mistake: one line saying what to fix, no traceback
    assert f"job {failed['id']} failed: {failed['error']}\n" in told
    assert "Traceback" not in told, told
