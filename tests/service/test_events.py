"""The SSE relay: resume with Last-Event-ID exactly once, 204 after the end, keep-alives."""

from __future__ import annotations

import json
import signal

import httpx
import pytest
from httpx_sse import connect_sse

from tests.local_stack import Stack, small_spec
from tests.service.conftest import event_ids, submit, wait_progress
from tests.service.stacks import api_stack

#: About two seconds of solving, with dozens of progress events.
TIMED_SPEC = small_spec(iterations=10**9, time_limit_s=8)  # 8 s of progress, ~4 reports a second


def read_events(client: httpx.Client, job_id: str, last_event_id: str | None = None,
                stop_after: int | None = None) -> list:
    """Events of one connection: all of them, or the first ``stop_after`` (then disconnect)."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    events = []
    with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events", headers=headers) as source:
        for event in source.iter_sse():
            events.append(event)
            if len(events) == stop_after:
                break
    return events


def test_reconnecting_with_last_event_id_yields_every_event_exactly_once(service: Stack):
    with service.client() as client:
        job_id = submit(client, TIMED_SPEC)
        first = read_events(client, job_id, stop_after=4)
        second = read_events(client, job_id, last_event_id=first[-1].id, stop_after=3)
        rest = read_events(client, job_id, last_event_id=second[-1].id)

    ids = [event.id for event in first + second + rest]
    assert ids == event_ids(service, job_id)
    assert len(set(ids)) == len(ids) > 20
    assert rest[-1].event == "result"


def test_a_client_that_saw_the_final_event_gets_204(service: Stack):
    with service.client() as client:
        job_id = submit(client, small_spec())
        events = read_events(client, job_id)
        again = client.get(f"/v1/jobs/{job_id}/events", headers={"Last-Event-ID": events[-1].id})
        replay = read_events(client, job_id)

    assert again.status_code == 204
    assert [event.id for event in replay] == [event.id for event in events]


def test_a_waiting_stream_sends_keep_alives_and_ends_when_the_job_is_cancelled(
        idle_service: Stack):
    with idle_service.client() as client, idle_service.client() as other:
        job_id = submit(client, small_spec())
        lines = []
        with client.stream("GET", f"/v1/jobs/{job_id}/events") as response:
            for line in response.iter_lines():
                lines.append(line)
                if lines.count(": keep-alive") == 2:
                    assert other.delete(f"/v1/jobs/{job_id}").json()["status"] == "cancelled"

    assert lines[:3] == ["retry: 1000", f"id: {event_ids(idle_service, job_id)[0]}",
                         "event: status"]
    after_keepalives = [lines[k + 1] for k, line in enumerate(lines) if line == ": keep-alive"]
    assert "" not in after_keepalives        # no blank line: nothing is dispatched again
    assert lines[-3:] == ["event: status", 'data: {"status": "cancelled", "error": null}', ""]


def test_a_keep_alive_period_longer_than_the_redis_client_default_timeout_is_waited_out(
        redis_server, tmp_path):
    """redis-py gives up on a read after 5 s by default; a 6 s wait for events must not."""
    with api_stack(redis_server, tmp_path, 8, {"LIGHTTOUCH_SSE_KEEPALIVE_S": "6"}) as stack, \
            stack.client() as client:
        job_id = submit(client, small_spec())
        with client.stream("GET", f"/v1/jobs/{job_id}/events") as response:
            lines = []
            for line in response.iter_lines():
                lines.append(line)
                if line == ": keep-alive":
                    break
    assert lines[-1] == ": keep-alive" and "event: status" in lines


@pytest.mark.slow
def test_restarting_the_api_mid_stream_loses_no_event(redis_server, tmp_path):
    stack = Stack(redis_server.url(4), tmp_path)
    stack.start_api()
    stack.start_worker()
    try:
        with stack.client() as client:
            job_id = submit(client, TIMED_SPEC)
            wait_progress(client, job_id)
            seen = []
            with pytest.raises(httpx.TransportError):
                with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events") as source:
                    for event in source.iter_sse():
                        seen.append(event)
                        if len(seen) == 3:
                            stack.stop_api(signal.SIGKILL)
            stack.start_api()
            seen += read_events(client, job_id, last_event_id=seen[-1].id)
        ids = [event.id for event in seen]
        assert ids == event_ids(stack, job_id) and len(set(ids)) == len(ids)
        assert json.loads(seen[-1].data)["status"] == "succeeded"
    finally:
        stack.close()
