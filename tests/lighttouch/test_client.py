"""lighttouch.Client against real Redis, API and worker processes: the same answer as in
process, arrays that arrive bit-identical, problems with the JSON path of a bad field, job
listing and cancelling, an event stream that survives an API restart."""

from __future__ import annotations

import base64
import io
import json
import pickle
import signal

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn import clone

import lighttouch
from lighttouch import Client, JobFailed, RemoteProblem
from tests.lighttouch.conftest import MAX_BODY_BYTES, RESTART_DATABASE
from tests.local_stack import KEYS, Stack, small_spec, wait_for
from worker.data.read import read_matrix
from worker.data.refs import DataRef
from worker.queue.keys import SPEC, key
from worker.settings import data_settings

#: Stats that time a run (differ between any two runs).
TIMINGS = ("s", "per_s", "rate")


def rate_spec(seed: int = 3) -> dict:
    """A small fair classification spec whose data are numpy arrays."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(200, 4))
    group = (rng.uniform(size=200) < 0.5).astype(np.float64)
    features[:, 0] += group
    labels = np.where(features[:, 0] + 0.3 * rng.normal(size=200) > 0.5, 1.0, -1.0)
    return {"objective": {"type": "empirical_risk", "loss": "hinge",
                          "data": {"features": features, "labels": labels,
                                   "groups": {"g": group, "h": 1.0 - group}}},
            "bounds": {"lower": -5.0, "upper": 5.0},
            "constraints": [{"type": "rate", "op": ">=",
                             "lhs": {"metric": "positive_prediction_rate", "group": "h"},
                             "rhs": {"metric": "positive_prediction_rate", "scale": 0.9}}],
            "solver": {"iterations": 20_000, "seed": seed}}


def untimed(result: lighttouch.Result) -> dict:
    """A Result without the stats that measure time."""
    document = result.model_dump()
    document["stats"] = {name: value for name, value in document["stats"].items()
                         if not name.endswith(TIMINGS)}
    return document


def test_the_service_and_this_process_give_the_same_result(client):
    spec = rate_spec()
    job = client.submit(spec)
    final = job.wait(timeout=120)   # with its progress bar
    served = job.result()
    assert final["status"] == "succeeded" and len(served.mixture) == 2
    assert untimed(served) == untimed(lighttouch.solve(spec))


def test_an_estimator_on_the_service_fits_what_it_fits_here(client):
    spec = rate_spec()
    features, labels = spec["objective"]["data"]["features"], spec["objective"]["data"]["labels"]
    group = np.where(spec["objective"]["data"]["groups"]["g"] > 0, "g", "h")
    params = {"constraints": [{"type": "rate", "op": ">=",
                               "lhs": {"metric": "positive_prediction_rate", "group": "*"},
                               "rhs": {"metric": "positive_prediction_rate", "scale": 0.9}}],
              "iterations": 20_000, "random_state": 5}
    local = lighttouch.ConstrainedClassifier(**params).fit(features, labels,
                                                           sensitive_features=group)
    remote = lighttouch.ConstrainedClassifier(backend=client, **params).fit(
        features, labels, sensitive_features=group)
    assert untimed(remote.result_) == untimed(local.result_)
    np.testing.assert_array_equal(remote.predict_proba(features), local.predict_proba(features))


def _payload(ref: dict) -> bytes:
    return base64.b64decode(ref["uri"].partition(",")[2])


def test_arrays_arrive_bit_identical(client, stack: Stack):
    tricky = np.array([[0.1, -0.0, 5e-324], [1.7976931348623157e308, -np.pi, 1 / 3]])
    arrays = {"dense": tricky, "fortran": np.asfortranarray(tricky),
              "single": np.array([[0.1, -0.0], [-np.pi, 1 / 3]], dtype=np.float32),
              "integers": np.arange(6, dtype=np.int16).reshape(2, 3),
              "sparse": sp.random(50, 7, density=0.2, format="csr", random_state=1),
              "frame": pd.DataFrame({"a": [0.1, 0.2], "b": [3, 4]})}
    constraints = [{"type": "linear", "A": value, "b": np.zeros(value.shape[0])}
                   for value in arrays.values()]
    job = client.submit({"dimension": 3, "objective": {"type": "quadratic", "Q": np.eye(3)},
                         "constraints": constraints})
    with stack.redis() as redis:
        stored = json.loads(redis.get(key(SPEC, job.id)))["constraints"]
    for (name, sent), constraint in zip(arrays.items(), stored, strict=True):
        payload = _payload(constraint["A"])
        received = read_matrix(DataRef.model_validate(constraint["A"]), name, roots=[],
                               settings=data_settings())
        if sp.issparse(sent):
            arrived = sp.load_npz(io.BytesIO(payload))
            assert arrived.format == "csr" and arrived.dtype == sent.dtype
            for part in ("data", "indices", "indptr"):
                assert getattr(arrived, part).tobytes() == getattr(sent, part).tobytes()
            assert (received != sent).nnz == 0
        else:
            sent = sent.to_numpy() if name == "frame" else sent
            arrived = np.load(io.BytesIO(payload), allow_pickle=False)
            assert arrived.dtype == sent.dtype and arrived.tobytes("A") == sent.tobytes("A")
            assert np.array_equal(received.view(np.uint64),
                                  sent.astype(np.float64).view(np.uint64))


def test_a_bad_field_is_a_problem_naming_its_json_path(client):
    spec = rate_spec()
    spec["constraints"][0]["op"] = "=="
    for send in (client.submit, client.validate):
        with pytest.raises(RemoteProblem) as caught:
            send(spec)
        problem = caught.value
        assert (problem.status, problem.title) == (422, "Invalid problem spec")
        assert problem.type == "urn:lighttouch:problem:spec-error"
        assert problem.paths == ["constraints[0].op"] and "'<=' or '>='" in problem.detail


def test_arrays_over_the_body_cap_are_a_413_problem_naming_the_setting(client):
    too_many = MAX_BODY_BYTES * 3 // 4 // 8 + 1000   # float64s whose base64 exceeds the cap
    spec = {"objective": {"type": "quadratic", "Q": np.eye(2), "c": np.zeros(too_many)}}
    with pytest.raises(RemoteProblem) as caught:
        client.submit(spec)
    assert caught.value.status == 413 and "LIGHTTOUCH_MAX_BODY_BYTES" in caught.value.detail


def test_validate_reports_sizes(client):
    summary = client.validate(rate_spec())
    assert summary["valid"] and summary["sizes"]["examples"] == 200
    assert summary["algorithm"] == "proxy_lagrangian"


def test_a_cancelled_job_is_listed_and_waiting_on_it_fails(client):
    job = client.submit(small_spec(iterations=10**9), idempotency_key="long-job-1")
    assert client.submit(small_spec(iterations=10**9), idempotency_key="long-job-1").id == job.id
    wait_for(lambda: job.status()["progress"], 60, "the job to make progress")
    job.cancel()
    with pytest.raises(JobFailed, match="cancelled"):
        job.wait(timeout=60, progress=False)
    assert job.id in [listed["id"] for listed in client.jobs(status="cancelled")]
    assert job.id not in [listed["id"] for listed in client.jobs(status="running")]
    with pytest.raises(RemoteProblem) as caught:
        job.result()
    assert caught.value.status == 409


def test_wait_times_out(client):
    job = client.submit(small_spec(iterations=10**9))
    with pytest.raises(TimeoutError):
        job.wait(timeout=1.5, progress=False)
    job.cancel()


def test_a_client_clones_and_pickles_as_its_address(client):
    estimator = lighttouch.ConstrainedRegressor(backend=client)
    for copied in (clone(estimator).backend, pickle.loads(pickle.dumps(client))):
        with copied:
            assert (copied.url, copied.api_key) == (client.url, client.api_key)
            assert copied.jobs(limit=1) is not None


@pytest.mark.slow
def test_the_event_stream_resumes_after_the_api_restarts(redis_server, tmp_path):
    restarted = Stack(redis_server.url(RESTART_DATABASE), tmp_path)
    restarted.start_api()
    restarted.start_worker()
    try:
        with Client(restarted.url, KEYS["alpha"]) as client:
            job = client.submit(small_spec(iterations=10**9, time_limit_s=25))  # runs 25 s
            seen, running_after_restart = [], None
            for event in job.events(timeout=120):
                seen.append(event)
                if event.name == "progress" and running_after_restart is None:
                    restarted.stop_api(signal.SIGKILL)
                    restarted.start_api()
                    running_after_restart = job.status()["status"]
            with restarted.redis() as redis:
                stored = [entry.decode() for entry, _ in
                          redis.xrange(key("events", job.id))]
            assert running_after_restart == "running"  # the stream was cut while it ran
            assert [event.id for event in seen] == stored
            assert seen[-1].data["status"] == "succeeded" and job.result().mixture
    finally:
        restarted.close()
