"""One job, one outcome, whatever dies: the worker parent killed under its horse, Redis
restarted under a running job; an event stream opened after Redis restarted. Real processes,
loopback only, bounded waits."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_stack import RedisServer, Stack, children, small_spec, wait_for
from tests.service.conftest import LONG_SPEC, submit, wait_progress, wait_status
from tests.service.stacks import api_stack
from worker.queue.state import is_terminal_event

#: A job of several seconds, long enough to restart Redis under it.
TIMED_SPEC = small_spec(iterations=10**9, time_limit_s=5)  # runs 5 s, whatever the speed


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
    with api_stack(redis_server, tmp_path_factory.mktemp("reliability"), 4) as stack:
        yield stack


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


@pytest.fixture(scope="module")
def restartable(tmp_path_factory) -> Iterator[tuple[RedisServer, Stack]]:
    """A stack on a redis-server of its own with AOF (everysec), which the tests restart."""
    server = RedisServer(persistent=True)
    stack = Stack(server.url(0), tmp_path_factory.mktemp("redis-restart"))
    stack.start_api()
    yield server, stack
    stack.close()
    server.stop()


@pytest.mark.parametrize("how", ["shutdown", "kill"])
def test_a_worker_rides_out_a_redis_restart_and_its_job_has_one_outcome(restartable, how):
    server, stack = restartable
    worker = stack.start_worker()
    with stack.client() as client:
        job_id = submit(client, TIMED_SPEC)
        wait_progress(client, job_id)
        server.restart(how)
        ended = wait_status(client, job_id, {"succeeded", "failed", "cancelled"}, timeout_s=60)
        following = submit(client, small_spec())
        after = wait_status(client, following, {"succeeded", "failed"}, timeout_s=60)
    alive_after = worker.poll() is None
    stack.stop_workers()

    assert alive_after, (stack.logs / "worker-0.log").read_text()[-3000:]
    assert ended["status"] == "succeeded", ended
    assert assert_one_outcome(stack, job_id) == "succeeded"
    assert after["status"] == "succeeded"


def events_of(client, job_id: str) -> tuple[int, str]:
    """The status code and the body of a finished job's whole event stream."""
    answer = client.get(f"/v1/jobs/{job_id}/events")
    return answer.status_code, answer.text


def test_an_event_stream_opened_after_a_redis_restart_replays_the_job(restartable):
    server, stack = restartable
    stack.start_worker()
    with stack.client() as client:
        job_id = submit(client, small_spec())
        wait_status(client, job_id, {"succeeded"}, timeout_s=60)
        before = events_of(client, job_id)   # leaves an idle connection in the stream pool
        stack.stop_workers()
        server.restart("shutdown")
        wait_for(lambda: client.get(f"/v1/jobs/{job_id}").status_code == 200, 30,
                 "the API reading the restarted Redis")
        after = events_of(client, job_id)
    assert before[0] == 200 and "event: result" in before[1]
    assert after == before
