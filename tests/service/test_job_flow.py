"""Submit → events in order → the same Result as ``lighttouch solve``; status, vectors, listing."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
from httpx_sse import connect_sse

from tests.local_stack import SMALL_SPEC, Stack, small_spec, wait_for
from tests.service.conftest import (
    LONG_SPEC,
    event_ids,
    problem,
    submit,
    wait_progress,
    wait_status,
)

TIMING_STATS = {"wall_s", "load_s", "solve_s", "lp_s", "projection_s", "lower_bound_s",
                "polish_s", "gamma_fit_s"}


def solve_in_process(tmp_path, spec: dict) -> dict:
    """What ``lighttouch solve SPEC -o RESULT`` writes."""
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    subprocess.run([sys.executable, "-m", "service.cli", "solve", "spec.json", "-o",
                    "result.json", "-q"], cwd=tmp_path, check=True)
    return json.loads((tmp_path / "result.json").read_text())


def without_timings(result: dict) -> dict:
    return dict(result, stats={k: v for k, v in result["stats"].items() if k not in TIMING_STATS})


def test_a_job_streams_ordered_progress_and_returns_the_in_process_result(service: Stack,
                                                                         tmp_path):
    with service.client() as client:
        response = client.post("/v1/jobs", json=SMALL_SPEC)
        assert response.status_code == 202
        answer = response.json()
        assert answer["status"] == "queued"
        assert response.headers["location"] == answer["links"]["self"]
        with connect_sse(client, "GET", answer["links"]["events"]) as source:
            events = list(source.iter_sse())
        result = client.get(answer["links"]["result"])
        status = client.get(answer["links"]["self"]).json()

    names = [event.event for event in events]
    assert names[:2] == ["status", "status"] and names[-1] == "result"
    assert [json.loads(e.data)["status"] for e in events[:2]] == ["queued", "running"]
    progress = [json.loads(e.data) for e in events if e.event == "progress"]
    assert len(progress) >= 2 and names.count("progress") == len(names) - 3
    iterations = [p["iteration"] for p in progress]
    assert iterations == sorted(iterations) and iterations[-1] == 20000
    assert [e.id for e in events] == event_ids(service, answer["id"])

    assert result.status_code == 200 and result.headers["content-type"] == "application/json"
    assert without_timings(result.json()) == without_timings(solve_in_process(tmp_path,
                                                                               SMALL_SPEC))
    assert json.loads(events[-1].data)["expected"] == result.json()["expected"]
    assert status["status"] == "succeeded" and status["error"] is None
    assert status["created_at"] <= status["started_at"] <= status["ended_at"]
    assert status["progress"] is None and status["last_progress"]["iteration"] == 20000


def test_result_vectors_download_as_npy(service: Stack):
    with service.client() as client:
        job_id = submit(client, SMALL_SPEC)
        with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events") as source:
            assert list(source.iter_sse())[-1].event == "result"
        result = client.get(f"/v1/jobs/{job_id}/result").json()
        vectors = {name: client.get(f"/v1/jobs/{job_id}/solution.npy",
                                    params={"vector": name} if name else {})
                   for name in (None, "projected", "mean", "mixture")}

    assert all(r.headers["content-type"] == "application/octet-stream" for r in vectors.values())
    arrays = {name: np.load(io.BytesIO(r.content)) for name, r in vectors.items()}
    assert np.array_equal(arrays[None], arrays["projected"])
    assert arrays["projected"].tolist() == result["projected"]["solution"]
    assert arrays["mean"].tolist() == result["mean"]["solution"]
    assert arrays["mixture"].tolist() == [member["solution"] for member in result["mixture"]]


def test_result_is_409_until_the_job_has_succeeded(service: Stack):
    with service.client() as client:
        job_id = submit(client, LONG_SPEC)
        wait_progress(client, job_id)
        running = problem(client.get(f"/v1/jobs/{job_id}/result"), 409)
        assert "running" in running["detail"]
        problem(client.get(f"/v1/jobs/{job_id}/solution.npy"), 409)
        client.delete(f"/v1/jobs/{job_id}")
        assert "cancelled" in problem(client.get(f"/v1/jobs/{job_id}/result"), 409)["detail"]


def test_listing_shows_the_tenants_jobs_newest_first_in_pages(service: Stack):
    with service.client("gamma") as client:
        ids = [submit(client, SMALL_SPEC) for _ in range(3)]
        first = client.get("/v1/jobs", params={"limit": 2}).json()
        second = client.get(first["next"]).json()

    assert [job["id"] for job in first["jobs"]] == ids[::-1][:2]
    assert [job["id"] for job in second["jobs"]] == ids[:1] and second["next"] is None


def test_listing_filters_by_status_and_algorithm_across_pages(service: Stack):
    projected_sgd = dict(small_spec(), solver={"algorithm": "projected_sgd",
                                            "iterations": 2000})
    with service.client("gamma") as client:
        ids = [submit(client, body) for body in (projected_sgd, small_spec(2000), projected_sgd)]
        for job_id in ids:
            wait_status(client, job_id, {"succeeded"})
        first = client.get("/v1/jobs", params={"limit": 1, "algorithm": "projected_sgd",
                                               "status": "succeeded"}).json()
        second = client.get(first["next"]).json()
        chosen = client.get(f"/v1/jobs/{ids[1]}").json()["algorithm"]
        bad = problem(client.get("/v1/jobs", params={"status": "done"}), 422)

    assert [job["id"] for job in first["jobs"] + second["jobs"]] == [ids[2], ids[0]]
    assert "status=succeeded" in first["next"] and "algorithm=projected_sgd" in first["next"]
    assert chosen not in (None, "auto") and "status" in bad["detail"]


def key_ttls(stack: Stack, job_id: str) -> dict[str, int] | None:
    """TTL of each of the job's keys by key kind, once every one of them has a TTL."""
    with stack.redis() as redis:
        ttls = {k.decode().rsplit(":", 1)[0]: redis.ttl(k) for k in redis.keys(f"*{job_id}*")}
    return ttls if all(0 < ttl <= 86_400 for ttl in ttls.values()) else None


def test_every_record_of_an_ended_job_expires_with_the_result(service: Stack):
    with service.client() as client:
        succeeded = submit(client, SMALL_SPEC)
        cancelled = submit(client, LONG_SPEC)
        wait_progress(client, cancelled)
        client.delete(f"/v1/jobs/{cancelled}")
    for job_id in (succeeded, cancelled):
        ttls = wait_for(lambda job_id=job_id: key_ttls(service, job_id), 10, "RQ to finish")
        assert set(ttls) >= {"rq:job", "lighttouch:events", "lighttouch:outcome",
                             "lighttouch:spec", "lighttouch:progress"}


def test_a_spec_the_engine_rejects_ends_failed_naming_the_field(service: Stack):
    bad = small_spec()
    bad["constraints"] = [{"type": "ordering", "chain": [0, 9]}]   # index past dimension 4
    with service.client() as client:
        job_id = submit(client, bad)
        failed = wait_status(client, job_id, {"failed", "succeeded"})
        after = submit(client, SMALL_SPEC)
        wait_status(client, after, {"succeeded"})
    assert failed["status"] == "failed"
    assert failed["error"].startswith("constraints[0].chain[1]: index 9 is out of range")


def test_a_network_job_returns_its_model_and_parameters(service: Stack):
    """An MLP on a robust objective through the queue: the Result names the network, and the
    vectors download with one entry per parameter."""
    rng = np.random.default_rng(0)
    terms = []
    for shift in (1.0, -1.0):
        x = rng.normal(size=(60, 3))
        terms.append({"type": "empirical_risk", "loss": "logistic",
                      "data": {"features": x.tolist(),
                               "labels": np.where(x[:, 0] + shift * x[:, 1] > 0, 1, -1)
                               .tolist()}})
    spec = {"model": {"type": "mlp", "hidden": [5]},
            "objective": {"type": "max_of", "terms": terms}, "solver": {"iterations": 500}}
    with service.client() as client:
        job_id = submit(client, spec)
        assert wait_status(client, job_id, {"succeeded", "failed"})["status"] == "succeeded"
        result = client.get(f"/v1/jobs/{job_id}/result").json()
        mixture = np.load(io.BytesIO(client.get(f"/v1/jobs/{job_id}/solution.npy",
                                                params={"vector": "mixture"}).content))
    assert result["model"] == {"type": "mlp", "sizes": [3, 5, 1], "bias": True,
                               "activation": "relu"}
    assert result["algorithm"] == "lagrangian" and result["sizes"]["constraints"] == 2
    assert mixture.shape == (len(result["mixture"]), 3 * 5 + 5 + 5 + 1)
