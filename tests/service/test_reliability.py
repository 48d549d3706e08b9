"""One job, one outcome, whatever dies: the worker parent killed under its horse, Redis
restarted under a running job. Real processes, loopback only, bounded waits."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.local_stack import RedisServer, Stack, children, wait_for
from tests.service.conftest import LONG_SPEC, submit, wait_progress, wait_status
from worker.queue.state import is_terminal_event


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def stream_events(stack: Stack, job_id: str) -> list[tuple[str, str]]:
    """(event, data) of every entry of the job's stream, read from Redis."""
    with stack.redis() as redis:
        return [(fields[b"event"].decode(), fields[b"data"].decode())
                for _, fields in redis.xrange(f"lighttouch:events:{job_id}")]


def assert_one_outcome(stack: Stack, job_id: str) -> str:
    """The stream holds exactly one terminal event and it is the last; that event's status."""
    events = stream_events(stack, job_id)
    terminal = [k for k, (event, data) in enumerate(events) if is_terminal_event(event, data)]
    assert terminal == [len(events) - 1], events[-5:]
    event, data = events[-1]
    return "succeeded" if event == "result" else json.loads(data)["status"]


@pytest.fixture(scope="module")
def stack(redis_server: RedisServer, tmp_path_factory) -> Iterator[Stack]:
    """A stack of its own (database 4): these tests kill its workers."""
    stack = Stack(redis_server.url(4), tmp_path_factory.mktemp("reliability"))
    stack.start_api()
    yield stack
    stack.close()


def test_killing_the_worker_parent_kills_its_horse_and_no_late_result_is_stored(stack: Stack):
    worker = stack.start_worker()
    with stack.client() as client:
        job_id = submit(client, LONG_SPEC)
        wait_progress(client, job_id)
        (horse,) = wait_for(lambda: children(worker.pid), 10, "the work horse")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        wait_for(lambda: not alive(horse), 10, "the orphaned horse to die")
        failed = wait_status(client, job_id, {"failed"}, timeout_s=30)
        result = client.get(f"/v1/jobs/{job_id}/result")
    stack.workers.clear()

    assert "stopped sending heartbeats" in failed["error"]
    assert result.status_code == 409
    assert assert_one_outcome(stack, job_id) == "failed"
    with stack.redis() as redis:
        assert not redis.exists(f"lighttouch:result:{job_id}")
