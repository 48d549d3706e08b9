"""Cancelling queued and running jobs: they end ``cancelled`` at once; the worker moves on."""

from __future__ import annotations

import json
import time

from httpx_sse import connect_sse

from tests.local_stack import Stack, small_spec
from tests.service.conftest import LONG_SPEC, problem, submit, wait_progress, wait_status


def stream_of(client, job_id: str) -> list:
    with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events") as source:
        return list(source.iter_sse())


def test_cancelling_a_running_job_stops_its_process_and_the_worker_takes_the_next(
        service: Stack):
    with service.client() as client:
        running = submit(client, LONG_SPEC)
        wait_progress(client, running)
        started = time.monotonic()
        cancelled = client.delete(f"/v1/jobs/{running}")
        following = submit(client, small_spec())
        wait_status(client, following, {"succeeded"}, timeout_s=5)
        elapsed = time.monotonic() - started
        events = stream_of(client, running)
        with service.redis() as redis:
            rq_status = redis.hget(f"rq:job:{running}", "status")

    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert elapsed < 5
    assert rq_status == b"stopped"   # its work horse was killed, not left to run
    assert json.loads(events[-1].data) == {"status": "cancelled", "error": None}


def test_cancelling_a_queued_job_drops_it_from_the_queue(service: Stack):
    with service.client() as client:
        blocker = submit(client, LONG_SPEC)
        wait_progress(client, blocker)
        queued = submit(client, small_spec())
        cancelled = client.delete(f"/v1/jobs/{queued}")
        with service.redis() as redis:
            still_queued = queued.encode() in redis.lrange("rq:queue:lighttouch", 0, -1)
        client.delete(f"/v1/jobs/{blocker}")
        after = submit(client, small_spec())
        wait_status(client, after, {"succeeded"}, timeout_s=5)
        statuses = [json.loads(event.data)["status"] for event in stream_of(client, queued)]

    assert cancelled.json()["status"] == "cancelled" and not still_queued
    assert statuses == ["queued", "cancelled"]   # it never ran


def test_cancel_is_idempotent_and_refused_once_a_job_has_succeeded(service: Stack):
    with service.client() as client:
        done = submit(client, small_spec())
        wait_status(client, done, {"succeeded"})
        refused = problem(client.delete(f"/v1/jobs/{done}"), 409)
        long = submit(client, LONG_SPEC)
        first, second = client.delete(f"/v1/jobs/{long}"), client.delete(f"/v1/jobs/{long}")

    assert "succeeded" in refused["detail"]
    assert first.json()["status"] == second.json()["status"] == "cancelled"
