"""``lighttouch submit`` against a running service; ``lighttouch worker --burst``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from service.progress import summary_text
from tests.local_stack import KEYS, REPO, Stack, small_spec, wait_for
from tests.service.conftest import submit, wait_status
from tests.specs import short_fairness_spec
from tests.test_cli import bar_end, ends_on
from worker.result import Result


def lighttouch(*args: str, cwd) -> subprocess.CompletedProcess:
    """Run the command in ``cwd`` (the repository on the path until ``service`` is installed)."""
    return subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120)


def submit_and_follow(service: Stack, spec: dict, folder) -> subprocess.CompletedProcess:
    """``lighttouch submit spec.json --follow -o result.json`` in ``folder``, which succeeded."""
    (folder / "spec.json").write_text(json.dumps(spec))
    done = lighttouch("submit", "spec.json", "--url", service.url, "--api-key", KEYS["alpha"],
                      "--follow", "-o", "result.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return done


def test_submit_follows_the_job_and_writes_the_result_as_the_api_returns_it(service: Stack,
                                                                           tmp_path):
    done = submit_and_follow(service, small_spec(), tmp_path)
    job_id = done.stderr.split()[1]
    with service.client() as client:
        served = client.get(f"/v1/jobs/{job_id}/result").content
    assert (tmp_path / "result.json").read_bytes() == served + b"\n"
    assert "solved" in done.stderr


def test_submit_follow_ends_its_bar_and_summary_on_the_results_figures(service: Stack,
                                                                       tmp_path):
    done = submit_and_follow(service, short_fairness_spec(), tmp_path)
    result = Result.model_validate_json((tmp_path / "result.json").read_text())

    assert result.expected.max_violation < 1e-6   # the last report's is about 0.05
    assert bar_end(done.stderr) == ends_on(result), done.stderr
    said = " ".join(done.stderr.split())
    assert summary_text(result.algorithm, result.summary()) in said, said


def test_submit_takes_the_service_and_key_from_the_environment(service: Stack, tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(small_spec()))
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "submit", "spec.json"], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "LIGHTTOUCH_URL": service.url,
             "LIGHTTOUCH_API_KEY": KEYS["alpha"]}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == "queued" and answer["links"]["self"] == f"/v1/jobs/{answer['id']}"


def test_submit_reports_a_refused_key_and_an_unreachable_service(service: Stack, tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(small_spec()))
    refused = lighttouch("submit", "spec.json", "--url", service.url, "--api-key", "nope-nope",
                         cwd=tmp_path)
    unreachable = lighttouch("submit", "spec.json", "--url", "http://127.0.0.1:9",
                             "--api-key", "whatever", cwd=tmp_path)
    assert refused.returncode == 1 and "HTTP 401: unknown API key" in refused.stderr
    assert unreachable.returncode == 1 and "cannot reach the service" in unreachable.stderr


@pytest.mark.slow
def test_submit_follow_survives_an_api_restart(redis_server, tmp_path):
    stack = Stack(redis_server.url(6), tmp_path / "logs")
    stack.start_api()
    stack.start_worker()
    (tmp_path / "spec.json").write_text(json.dumps(small_spec(iterations=900_000)))
    try:
        follower = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "submit", "spec.json", "--url", stack.url,
             "--api-key", KEYS["alpha"], "-o", "result.json", "-q"], cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE, text=True)
        with stack.client() as client:
            wait_for(lambda: [job for job in client.get("/v1/jobs").json()["jobs"]
                              if job["progress"]], 30, "the job to make progress")
            stack.stop_api(signal.SIGKILL)
            stack.start_api()
            _, errors = follower.communicate(timeout=60)
            job_id = errors.split()[1]
            served = client.get(f"/v1/jobs/{job_id}/result").content
        assert follower.returncode == 0, errors
        assert (tmp_path / "result.json").read_bytes() == served + b"\n"
    finally:
        stack.close()


def test_a_burst_worker_drains_the_queue_and_exits(redis_server, tmp_path):
    stack = Stack(redis_server.url(5), tmp_path)
    stack.start_api()
    try:
        with stack.client() as client:
            jobs = [submit(client, small_spec(seed=seed)) for seed in (1, 2)]
            burst = subprocess.run([sys.executable, "-m", "service.cli", "worker", "--burst"],
                                   cwd=REPO, env=stack.env, capture_output=True, timeout=120)
            statuses = [wait_status(client, job, {"succeeded", "failed"}, 5)["status"]
                        for job in jobs]
        assert burst.returncode == 0 and statuses == ["succeeded", "succeeded"]
    finally:
        stack.close()
