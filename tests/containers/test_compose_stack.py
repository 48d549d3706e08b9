"""The image and the compose stack, used as a client would: jobs from the examples and from
files under /data, the dashboards (the web one in Chromium, from the installed wheel),
non-root containers, three workers, and faults (a worker container killed mid-job, Redis and
the API restarted)."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from httpx_sse import connect_sse
from playwright.sync_api import Browser, expect

from tests.containers.conftest import API_KEY, HEARTBEAT_S, WORKERS, ComposeStack
from tests.local_stack import REPO, wait_for
from tests.service.conftest import submit, wait_status
from tests.service.ui.conftest import browser  # noqa: F401 (the fixture: headless Chromium)
from worker.queue.state import is_terminal_event
from worker.queue.workers import MISSED_HEARTBEATS

pytestmark = pytest.mark.containers

#: The documented bound for a dead worker, plus slack for a loaded 2-core machine.
DEAD_WORKER_BOUND_S = (MISSED_HEARTBEATS + 1) * HEARTBEAT_S + 10
IMAGE_USER_ID = "10001"


def example(name: str, **solver) -> dict:
    """A spec from ``examples/`` with solver settings changed."""
    spec = json.loads((REPO / "examples" / name).read_text())
    spec["solver"].update(solver)
    return spec


def long_lattice(time_limit_s: float) -> dict:
    """The lattice example running until its time limit."""
    return example("lattice_ranking.json", iterations=10**9, time_limit_s=time_limit_s)


def run_job(client: httpx.Client, spec: dict) -> tuple[dict, float]:
    """Submit, wait for success; the status document and the seconds it took."""
    start = time.perf_counter()
    job_id = submit(client, spec)
    document = wait_status(client, job_id, {"succeeded", "failed"}, timeout_s=300)
    assert document["status"] == "succeeded", document
    return document, time.perf_counter() - start


def test_the_api_answers_with_three_workers_alive(stack: ComposeStack):
    assert httpx.get(f"{stack.url}/healthz", timeout=10).status_code == 200
    health = wait_for(lambda: (h := httpx.get(f"{stack.url}/readyz", timeout=10).json())
                      ["workers"] == WORKERS and h, 180, f"{WORKERS} live workers")
    assert health["status"] == "ready"
    assert len(stack.containers("worker")) == WORKERS


def test_the_dashboard_served_by_the_image_shows_the_first_job(stack: ComposeStack,
                                                                browser: Browser):  # noqa: F811
    with stack.client() as client:
        document, _ = run_job(client, example("lattice_ranking.json"))
    stack.timings["up_to_first_job_s"] = time.perf_counter() - stack.up_at
    context = browser.new_context(base_url=stack.url)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.set_default_timeout(30_000)
    page.goto("/ui/")
    page.get_by_label("API key").fill(API_KEY)
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Jobs").wait_for()
    page.goto(f"/ui/#/jobs/{document['id']}")
    expect(page.get_by_role("heading", name=f"Job {document['id']}")).to_be_visible()
    expect(page.locator(".status")).to_contain_text("succeeded")
    expect(page.locator("main")).not_to_contain_text("Loading")
    context.close()
    assert errors == []


def test_every_container_of_the_image_runs_as_its_non_root_user(stack: ComposeStack):
    for service in ("api", "worker", "dask-scheduler", "dask-worker"):
        for name in stack.containers(service):
            assert stack.podman("exec", name, "id", "-u").strip() == IMAGE_USER_ID, name


def test_an_example_job_succeeds_on_warm_workers(stack: ComposeStack):
    with stack.client() as client:
        first, first_s = run_job(client, example("lattice_ranking.json"))
        _, second_s = run_job(client, example("lattice_ranking.json"))
        result = client.get(f"/v1/jobs/{first['id']}/result").json()
    stack.timings.update(first_job_s=first_s, second_job_s=second_s)
    assert result["mixture"] and result["expected"]["objective"] > 0


def test_a_job_reads_its_data_from_files_under_data(stack: ComposeStack):
    spec = example("lattice_ranking.json")
    for side in ("positive", "negative"):
        spec["objective"]["data"][side] = {"uri": f"file:///data/lattice_{side}.npz"}
    with stack.client() as client:
        document, _ = run_job(client, spec)
        from_files = client.get(f"/v1/jobs/{document['id']}/result").json()
        inline, _ = run_job(client, example("lattice_ranking.json"))
        from_spec = client.get(f"/v1/jobs/{inline['id']}/result").json()
    assert from_files["expected"] == from_spec["expected"]


def test_a_file_outside_the_data_folder_is_refused_at_submit(stack: ComposeStack):
    spec = example("lattice_ranking.json")
    spec["objective"]["data"]["positive"] = {"uri": "file:///etc/passwd", "format": "csv"}
    with stack.client() as client:
        response = client.post("/v1/jobs", json=spec)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["path"] == "objective.data.positive"


def test_the_web_and_dask_dashboards_serve_their_pages(stack: ComposeStack):
    page = httpx.get(f"{stack.url}/ui/", timeout=10)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "<html" in page.text.lower()
    status = wait_for(lambda: (r := httpx.get(f"{stack.dashboard_url}/status", timeout=10,
                                              follow_redirects=True)).status_code == 200 and r,
                      60, "the Dask dashboard")
    assert "bokeh" in status.text.lower()


def test_svrg_ol_runs_its_batch_phase_on_the_dask_workers(stack: ComposeStack):
    spec = example("adult_logistic.json", algorithm="svrg_ol", iterations=20000,
                   svrg={"workers": 1})
    with stack.client() as client:
        document, _ = run_job(client, spec)
        result = client.get(f"/v1/jobs/{document['id']}/result").json()
    scheduler = stack.logs_of(stack.containers("dask-scheduler")[0])
    assert result["expected"]["objective"] > 0
    assert "Receive client connection" in scheduler


def test_a_pairwise_job_reads_its_partitions_on_the_dask_workers(stack: ComposeStack):
    """The lattice example's pairs as .npy tables under /data, read in row-aligned
    partitions by the compose Dask workers (``solver.workers: 2``): the answer has the same
    bits as the same partitioned plan run inside the worker container (``workers: 0``)."""
    def partitioned(workers: int) -> dict:
        spec = example("lattice_ranking.json", iterations=40_000, workers=workers,
                       svrg={"partition_rows": 1000})
        for side in ("positive", "negative"):
            spec["objective"]["data"][side] = {"uri": f"file:///data/lattice_{side}.npy",
                                               "format": "npy"}
        return spec
    with stack.client() as client:
        on_cluster, _ = run_job(client, partitioned(2))
        clustered = client.get(f"/v1/jobs/{on_cluster['id']}/result").json()
        in_worker, _ = run_job(client, partitioned(0))
        local = client.get(f"/v1/jobs/{in_worker['id']}/result").json()
    assert clustered["stats"]["placement"] == "cluster", clustered["stats"]
    assert "tcp://dask-scheduler:8786" in clustered["stats"]["placement_reason"]
    assert clustered["stats"]["partitions"] == 4 and clustered["stats"]["bytes_moved"] > 0
    assert local["stats"]["placement"] == "in_process" and local["stats"]["bytes_moved"] == 0
    assert clustered["projected"]["solution"] == local["projected"]["solution"]
    assert clustered["expected"] == local["expected"]


def worker_running(stack: ComposeStack, job_id: str) -> str:
    """The worker container running ``job_id``: the job's RQ worker registered the
    container's hostname."""
    def found() -> str | None:
        worker = stack.redis_cli("HGET", f"rq:job:{job_id}", "worker_name")
        hostname = stack.redis_cli("HGET", f"rq:worker:{worker}", "hostname") if worker else ""
        for name in stack.containers("worker"):
            if hostname and stack.podman("inspect", name, "--format",
                                         "{{.Config.Hostname}}").strip() == hostname:
                return name
        return None
    return wait_for(found, 30, f"the worker container of job {job_id}", interval_s=0.5)


def test_a_worker_container_killed_mid_job_fails_it_within_the_heartbeat_bound(
        stack: ComposeStack):
    with stack.client() as client:
        job_id = submit(client, long_lattice(600))
        wait_for(lambda: client.get(f"/v1/jobs/{job_id}").json()["progress"], 120,
                 "progress of the long job")
        stack.podman("kill", worker_running(stack, job_id))
        killed = time.monotonic()
        failed = wait_status(client, job_id, {"failed"}, timeout_s=DEAD_WORKER_BOUND_S)
        detected_s = time.monotonic() - killed
        run_job(client, example("lattice_ranking.json"))
    stack.timings["dead_worker_detected_s"] = detected_s
    assert "stopped sending heartbeats" in failed["error"]


def test_finished_results_survive_a_redis_restart(stack: ComposeStack):
    with stack.client() as client:
        document, _ = run_job(client, example("constrained_qp.json", iterations=20000))
        before = client.get(f"/v1/jobs/{document['id']}/result").content
        time.sleep(2)  # AOF is fsynced every second
        (redis,) = stack.containers("redis")
        stack.podman("restart", redis)
        stack.wait_ready()
        after = client.get(f"/v1/jobs/{document['id']}/result")
        run_job(client, example("lattice_ranking.json"))
    assert after.status_code == 200 and after.content == before


def follow(client: httpx.Client, job_id: str, last_id: str | None) -> list:
    """The job's events after ``last_id`` until the stream ends or the connection drops."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    events = []
    try:
        with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events", headers=headers) as source:
            for event in source.iter_sse():
                events.append(event)
    except httpx.HTTPError:
        pass
    return events


def test_an_event_stream_resumes_across_an_api_restart(stack: ComposeStack):
    with stack.client() as client:
        job_id = submit(client, long_lattice(40))
        wait_for(lambda: client.get(f"/v1/jobs/{job_id}").json()["progress"], 120,
                 "progress of the job")
        (api,) = stack.containers("api")
        received = []
        with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events") as source:
            for event in source.iter_sse():
                received.append(event)
                if len(received) == 3:
                    break
        stack.podman("restart", "-t", "2", api)
        deadline = time.monotonic() + 180
        while not is_terminal_event(received[-1].event, received[-1].data):
            assert time.monotonic() < deadline, "the stream did not end"
            received += follow(client, job_id, received[-1].id)
            time.sleep(0.5)
        document = client.get(f"/v1/jobs/{job_id}").json()
    ids = [event.id for event in received if event.id]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-")))) and \
        len(ids) == len(set(ids)), ids
    assert received[-1].event == "result" and document["status"] == "succeeded"

