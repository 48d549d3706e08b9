"""A finished job's figures are its Result's: the status document, the jobs list and the
``result`` event carry the Result's summary; the last progress report is kept as history."""

from __future__ import annotations

import json

from httpx_sse import connect_sse

from tests.local_stack import Stack
from tests.service.conftest import submit
from tests.specs import short_fairness_spec
from worker.result import Result


def test_a_finished_job_reads_its_results_figures_everywhere_not_its_last_report(
        service: Stack):
    with service.client() as client:
        job_id = submit(client, short_fairness_spec())
        with connect_sse(client, "GET", f"/v1/jobs/{job_id}/events") as source:
            events = list(source.iter_sse())
        result = Result.model_validate_json(client.get(f"/v1/jobs/{job_id}/result").content)
        status = client.get(f"/v1/jobs/{job_id}").json()
        listed = next(job for job in client.get("/v1/jobs").json()["jobs"]
                      if job["id"] == job_id)
    last_report = [json.loads(event.data) for event in events if event.event == "progress"][-1]
    summary = {"objective": result.expected.objective,
               "max_violation": result.expected.max_violation,
               "relative_gap": None, "members": len(result.mixture),
               "feasibility": result.feasibility.model_dump()}

    # the case at stake: the running average's last violation is far from the Result's
    assert last_report["max_violation"] > 1e6 * result.expected.max_violation
    assert events[-1].event == "result" and json.loads(events[-1].data)["summary"] == summary
    assert status["status"] == "succeeded" and status["summary"] == summary
    assert listed["summary"] == summary
    assert status["progress"] is None and listed["progress"] is None
    assert status["last_progress"] == last_report
