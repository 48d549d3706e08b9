"""Liveness, readiness (Redis and a live worker) and Prometheus metrics."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.local_stack import Stack, free_port, small_spec
from tests.service.conftest import problem, submit, wait_status


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
