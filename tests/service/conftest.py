"""Fixtures: one redis-server per session; stacks of real API and worker processes on it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.local_stack import RedisServer, Stack, small_spec, wait_for

#: A job that runs until it is cancelled or killed (a long numba loop).
LONG_SPEC = small_spec(iterations=10**9, time_limit_s=600)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private redis-server for the whole session."""
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def service(redis_server: RedisServer, tmp_path_factory) -> Iterator[Stack]:
    """The shared stack: API and one worker (database 1); 1 s heartbeats and keep-alives."""
    stack = Stack(redis_server.url(1), tmp_path_factory.mktemp("service"),
                  {"LIGHTTOUCH_SSE_KEEPALIVE_S": "1"})
    stack.start_api()
    stack.start_worker()
    yield stack
    stack.close()


@pytest.fixture(scope="session")
def idle_service(redis_server: RedisServer, tmp_path_factory) -> Iterator[Stack]:
    """An API without workers (database 2): jobs stay queued; small caps for limit tests."""
    stack = Stack(redis_server.url(2), tmp_path_factory.mktemp("idle-service"),
                  {"LIGHTTOUCH_MAX_ACTIVE_JOBS": "3", "LIGHTTOUCH_MAX_BODY_BYTES": "65536",
                   "LIGHTTOUCH_SSE_KEEPALIVE_S": "0.5"})
    stack.start_api()
    yield stack
    stack.close()


def submit(client: httpx.Client, body: dict) -> str:
    """Submit ``body``; the new job's id."""
    response = client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def wait_status(client: httpx.Client, job_id: str, statuses: set[str],
                timeout_s: float = 30) -> dict:
    """Poll the job until its status is one of ``statuses``; its status document."""
    def reached() -> dict | None:
        document = client.get(f"/v1/jobs/{job_id}").json()
        return document if document["status"] in statuses else None
    return wait_for(reached, timeout_s, f"job {job_id} to be {statuses}")


def wait_progress(client: httpx.Client, job_id: str) -> dict:
    """Wait until the job has reported progress (it is inside the solver loop)."""
    return wait_for(lambda: client.get(f"/v1/jobs/{job_id}").json()["progress"], 30,
                    f"progress of job {job_id}")


def event_ids(stack: Stack, job_id: str) -> list[str]:
    """Every entry id of the job's event stream, read from Redis directly."""
    with stack.redis() as redis:
        return [entry_id.decode() for entry_id, _ in redis.xrange(f"lighttouch:events:{job_id}")]


def problem(response: httpx.Response, status: int) -> dict:
    """Assert ``response`` is an RFC 9457 problem with ``status``; its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = json.loads(response.content)
    assert body["status"] == status and body["title"] and body["detail"]
    return body
