"""Hostile but well-formed HTTP requests get a 4xx problem naming what to fix, never a 5xx,
and the connection stays usable after every refusal."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from tests.local_stack import KEYS, Stack, small_spec
from tests.service.conftest import problem

SPEC_TEXT = json.dumps(small_spec())


def spec_with(old: str, new: str) -> str:
    """The small spec's JSON text with one piece of text replaced (kept verbatim: values
    Python's json module would not write)."""
    assert old in SPEC_TEXT
    return SPEC_TEXT.replace(old, new, 1)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


#: (case, body text, the path the refusal names)
HOSTILE_BODIES = [
    ("integer over 4,300 digits", spec_with('"dimension": 4', '"dimension": 1' + "0" * 5000),
     "dimension"),
    ("huge integer inside data", spec_with('"c": [1,', '"c": [1' + "0" * 5000 + ","),
     "objective.c[0]"),
    ("nesting 1,000 deep", spec_with('"spec_version": 1', '"name": ' + nested(1000)), ""),
    ("nesting 30,000 deep", spec_with('"spec_version": 1', '"name": ' + nested(30_000)), ""),
    ("lone surrogate", spec_with('"spec_version": 1', '"spec_version": 1, "name": "\\udc80"'),
     "name"),
    ("index past int64", spec_with('"chain": [0, 1, 2, 3]', '"pairs": [[0, 9223372036854775808]]'),
     "constraints[0].pairs[0][1]"),
    ("index at int64 max", spec_with('"chain": [0, 1, 2, 3]', '"chain": [0, 9223372036854775807]'),
     "constraints[0].chain[1]"),
    ("NaN", spec_with('"seed": 1', '"seed": 1, "gamma": NaN'), "solver.gamma"),
    ("Infinity in data", spec_with('"c": [1,', '"c": [Infinity,'), "objective.c[0]"),
    ("huge step scale", spec_with('"seed": 1', '"seed": 1, "eta_w": 1e308'), "solver.eta_w"),
    ("dimension as a string", spec_with('"dimension": 4', '"dimension": "4"'), "dimension"),
    ("dimension as a boolean", spec_with('"dimension": 4', '"dimension": true'), "dimension"),
    ("chain of strings", spec_with('"chain": [0, 1, 2, 3]', '"chain": ["0", "1"]'),
     "constraints[0].chain[0]"),
    ("iterations past int64", spec_with('"iterations": 20000', '"iterations": 9223372036854775808'),
     "solver.iterations"),
    ("minibatch past int64",
     spec_with('"seed": 1', '"seed": 1, "minibatch": {"k_f": 99999999999999999999}'),
     "solver.minibatch.k_f"),
    ("over the per-job memory budget",
     spec_with('"seed": 1', '"seed": 1, "candidates": 10000').replace('"dimension": 4',
                                                                     '"dimension": 4194304'),
     "solver.candidates"),
    ("lattice overflowing int64", spec_with(
        '{"type": "ordering", "chain": [0, 1, 2, 3]}',
        '{"type": "monotone_lattice", "shape": [134217728, 134217728, 134217728], '
        '"increasing": [0]}'), "constraints[0].shape"),
]


@pytest.mark.parametrize("endpoint", ["/v1/jobs", "/v1/validate"])
@pytest.mark.parametrize(("case", "text", "path"), HOSTILE_BODIES,
                         ids=[case for case, _, _ in HOSTILE_BODIES])
def test_a_hostile_body_is_a_4xx_naming_the_field(idle_service: Stack, endpoint, case, text,
                                                  path):
    with idle_service.client() as client:
        response = client.post(endpoint, content=text.encode("utf-8", "surrogatepass"),
                               headers={"Content-Type": "application/json"})
    body = problem(response, 422)
    paths = [issue["path"] for issue in body.get("errors", [{"path": ""}])]
    assert path in paths, (case, body)


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/xml", "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x", None])
def test_a_body_that_is_not_declared_json_is_415(idle_service: Stack, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    with idle_service.client() as client:
        for endpoint in ("/v1/jobs", "/v1/validate"):
            body = problem(client.post(endpoint, content=SPEC_TEXT, headers=headers), 415)
            assert "application/json" in body["detail"]


def test_json_media_types_with_parameters_are_accepted(idle_service: Stack):
    with idle_service.client() as client:
        response = client.post("/v1/validate", content=SPEC_TEXT,
                               headers={"Content-Type": "application/json; charset=utf-8"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("last_event_id", ["18446744073709551616-0", "0-18446744073709551616",
                                           "yesterday", "1-2-3", "-1-0", ""])
def test_a_malformed_last_event_id_is_400(idle_service: Stack, last_event_id):
    with idle_service.client() as client:
        job_id = client.post("/v1/jobs", json=small_spec()).json()["id"]
        with client.stream("GET", f"/v1/jobs/{job_id}/events",
                           headers={"Last-Event-ID": last_event_id}) as response:
            response.read() if response.status_code != 200 else None
        client.delete(f"/v1/jobs/{job_id}")
    if last_event_id == "":
        assert response.status_code == 200   # an empty id means "from the start" (SSE spec)
        return
    body = problem(response, 400)
    assert body["errors"][0]["path"] == "header.last-event-id"


def test_405_lists_the_allowed_methods(idle_service: Stack):
    with idle_service.client() as client:
        response = client.put("/v1/jobs")
        validate = client.get("/v1/validate")
    problem(response, 405)
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST"}
    problem(validate, 405)
    assert validate.headers["allow"] == "POST"


def raw_request(connection: socket.socket, method: str, path: str, body: bytes = b"",
                content_type: str = "application/json") -> bytes:
    """Send one HTTP/1.1 request on an open connection; the response's head and body."""
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {KEYS['alpha']}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    connection.sendall(head + body)
    response = b""
    while b"\r\n\r\n" not in response:
        response += connection.recv(65536)
    head_text, _, rest = response.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head_text.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += connection.recv(65536)
    return head_text + b"\r\n\r\n" + rest


def test_the_connection_stays_open_after_refusals(idle_service: Stack):
    hostile = [text for _, text, _ in HOSTILE_BODIES[:6]]
    url = httpx.URL(idle_service.url)
    with socket.create_connection((url.host, url.port), timeout=30) as connection:
        statuses = []
        for text in hostile:
            answer = raw_request(connection, "POST", "/v1/validate",
                                 text.encode("utf-8", "surrogatepass"))
            statuses.append(int(answer.split(b" ", 2)[1]))
            assert b"connection: close" not in answer.lower()
        statuses.append(int(raw_request(connection, "POST", "/v1/validate", SPEC_TEXT.encode(),
                                        "text/plain").split(b" ", 2)[1]))
        final = raw_request(connection, "POST", "/v1/validate", SPEC_TEXT.encode())
    assert statuses == [422] * len(hostile) + [415]
    assert final.startswith(b"HTTP/1.1 200")
