"""Input limits and validation: 413, 422 naming the field, 429 with Retry-After, idempotency."""

from __future__ import annotations

import json

from tests.local_stack import Stack, small_spec
from tests.service.conftest import LONG_SPEC, problem, submit

LIMIT = 65536   # LIGHTTOUCH_MAX_BODY_BYTES of the idle stack


def large_spec() -> dict:
    body = small_spec()
    body["name"] = "x" * LIMIT
    return body


def test_an_oversized_body_is_413(idle_service: Stack):
    with idle_service.client() as client:
        declared = problem(client.post("/v1/jobs", json=large_spec()), 413)
        chunked = problem(client.post("/v1/jobs", content=iter([json.dumps(large_spec())
                                                                .encode()]),
                                      headers={"Content-Type": "application/json"}), 413)
        validate = client.post("/v1/validate", json=large_spec())
    assert "65,536 bytes" in declared["detail"] and chunked["status"] == 413
    assert validate.status_code == 413


def test_an_invalid_spec_is_422_naming_the_field(idle_service: Stack):
    bad_iterations = small_spec()
    bad_iterations["solver"]["iterations"] = -5
    unknown_field = dict(small_spec(), colour="blue")
    with idle_service.client() as client:
        iterations = problem(client.post("/v1/jobs", json=bad_iterations), 422)
        unknown = problem(client.post("/v1/jobs", json=unknown_field), 422)
        not_json = problem(client.post("/v1/jobs", content=b"{not json",
                                       headers={"Content-Type": "application/json"}), 422)
        validate = problem(client.post("/v1/validate", json=bad_iterations), 422)

    assert iterations["errors"][0]["path"] == "solver.iterations"
    assert "solver.iterations" in iterations["detail"]
    assert iterations["type"] == "urn:lighttouch:problem:spec-error"
    assert unknown["errors"][0]["path"] == "colour"
    assert "is not JSON" in not_json["detail"]
    assert validate["errors"] == iterations["errors"]


def test_validate_reports_sizes_and_the_algorithm(idle_service: Stack):
    with idle_service.client() as client:
        summary = client.post("/v1/validate", json=small_spec()).json()
    assert summary["valid"]
    assert summary["sizes"] == {"parameters": 4, "constraints": 3, "examples": 0}
    assert summary["algorithm"] == "fulltouch" and summary["memory_estimate_bytes"] > 0


def test_the_active_job_cap_is_429_with_retry_after(idle_service: Stack):
    with idle_service.client("beta") as client:
        jobs = [submit(client, LONG_SPEC) for _ in range(3)]
        refused = client.post("/v1/jobs", json=LONG_SPEC)
        client.delete(f"/v1/jobs/{jobs[0]}")
        accepted = client.post("/v1/jobs", json=LONG_SPEC)
        with idle_service.client("gamma") as other_tenant:
            unaffected = other_tenant.post("/v1/jobs", json=LONG_SPEC)
            other_tenant.delete(f"/v1/jobs/{unaffected.json()['id']}")
        for job_id in [*jobs[1:], accepted.json()["id"]]:
            client.delete(f"/v1/jobs/{job_id}")

    assert "3 queued or running" in problem(refused, 429)["detail"]
    assert int(refused.headers["retry-after"]) > 0
    assert accepted.status_code == 202 and unaffected.status_code == 202


def test_a_repeated_idempotency_key_replays_the_first_answer(idle_service: Stack):
    key = {"Idempotency-Key": "order-7"}
    with idle_service.client("alpha") as client:
        first = client.post("/v1/jobs", json=small_spec(), headers=key)
        again = client.post("/v1/jobs", json=small_spec(), headers=key)
        different = client.post("/v1/jobs", json=small_spec(seed=2), headers=key)
        listed = [job["id"] for job in client.get("/v1/jobs").json()["jobs"]]
        client.delete(f"/v1/jobs/{first.json()['id']}")

    assert first.status_code == again.status_code == 202
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert listed.count(first.json()["id"]) == 1 and len(listed) == len(set(listed))
    assert "different body" in problem(different, 409)["detail"]


def test_unknown_routes_and_methods_are_problems_too(idle_service: Stack):
    with idle_service.client() as client:
        assert "no route of this API matches '/v2/jobs'" in problem(client.get("/v2/jobs"),
                                                                    404)["detail"]
        problem(client.put("/v1/jobs"), 405)
        problem(client.get("/v1/jobs", params={"limit": 0}), 422)


def test_a_slot_held_by_a_vanished_job_is_reclaimed(idle_service: Stack):
    with idle_service.redis() as redis:
        redis.sadd("lighttouch:active:beta", "0" * 32)   # a job that ended without finish()
    with idle_service.client("beta") as client:
        jobs = [client.post("/v1/jobs", json=LONG_SPEC) for _ in range(3)]
        for response in jobs:
            client.delete(f"/v1/jobs/{response.json()['id']}")
    assert [response.status_code for response in jobs] == [202, 202, 202]


def test_bad_query_and_spec_values_say_what_to_give(idle_service: Stack):
    """The API's 422s speak as the CLI does: no validator names, what to give instead."""
    with idle_service.client() as client:
        listing = problem(client.get("/v1/jobs", params={"limit": "0"}), 422)
        spec = small_spec()
        spec["solver"] = {"iterations": "many"}
        refused = problem(client.post("/v1/validate", json=spec), 422)
    assert listing["errors"] == [{"path": "query.limit", "message": "give a number >= 1 "
                                  "(got '0')"}]
    assert refused["errors"] == [{"path": "solver.iterations", "message": "give 'auto' or "
                                  "an integer (got 'many')"}]
