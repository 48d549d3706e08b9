"""A worker killed mid-job: the job ends ``failed`` with a clear error within the bound."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator

import pytest
from httpx_sse import connect_sse

from tests.local_stack import RedisServer, Stack, children, small_spec, wait_for
from tests.service.conftest import LONG_SPEC, submit, wait_progress, wait_status
from tests.service.stacks import api_stack
from worker.queue.workers import MISSED_HEARTBEATS

HEARTBEAT_S = 1
#: The documented bound for a dead worker, plus slack for a loaded test machine.
DEAD_WORKER_BOUND_S = (MISSED_HEARTBEATS + 1) * HEARTBEAT_S + 3


@pytest.fixture(scope="module")
def stack(redis_server: RedisServer, tmp_path_factory) -> Iterator[Stack]:
    """A stack of its own (database 3): these tests kill its workers."""
    with api_stack(redis_server, tmp_path_factory.mktemp("worker-death"), 3) as stack:
        yield stack


def running_horse(stack: Stack, client) -> tuple[str, int]:
    """Start a long job on a fresh worker; the job id and its work horse's pid."""
    worker = stack.start_worker()
    job_id = submit(client, LONG_SPEC)
    wait_progress(client, job_id)
    (horse,) = wait_for(lambda: children(worker.pid), 10, "the work horse")
    return job_id, horse


def final_event(client, job_id: str) -> dict:
    with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events") as source:
        return json.loads(list(source.iter_sse())[-1].data)


def test_a_killed_work_horse_fails_its_job_at_once_and_the_worker_goes_on(stack: Stack):
    with stack.client() as client:
        job_id, horse = running_horse(stack, client)
        os.kill(horse, signal.SIGKILL)
        failed = wait_status(client, job_id, {"failed"}, timeout_s=5)
        following = submit(client, small_spec())
        wait_status(client, following, {"succeeded"}, timeout_s=10)
        event = final_event(client, job_id)
    stack.stop_workers()

    assert "killed by SIGKILL" in failed["error"] and "memory" in failed["error"]
    assert event == {"status": "failed", "error": failed["error"]}


def test_a_killed_worker_fails_its_job_within_the_heartbeat_bound(stack: Stack):
    with stack.client() as client:
        job_id, horse = running_horse(stack, client)
        worker = stack.workers[-1]
        worker.kill()
        os.kill(horse, signal.SIGKILL)
        worker.wait()
        killed = time.monotonic()
        failed = wait_status(client, job_id, {"failed"}, timeout_s=DEAD_WORKER_BOUND_S)
        detected_s = time.monotonic() - killed
        event = final_event(client, job_id)
    stack.stop_workers()

    assert "stopped sending heartbeats" in failed["error"]
    assert event["status"] == "failed"
    assert detected_s <= DEAD_WORKER_BOUND_S
