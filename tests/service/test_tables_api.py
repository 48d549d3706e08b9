"""A calibrated model over HTTP, against a real API, worker and Redis: validation (in its
bounded child process) lowers the table, the job's Result carries the model, and a bad
column is a problem response naming the table's path and the column."""

from __future__ import annotations

import copy

from tests.local_stack import Stack
from tests.service.conftest import submit, wait_status
from tests.tables.raw import inline_lattice_spec


def test_a_calibrated_lattice_validates_and_solves_over_http(service: Stack):
    spec = inline_lattice_spec()
    with service.client("alpha") as client:
        validated = client.post("/v1/validate", json=spec)
        assert validated.status_code == 200, validated.text
        assert validated.json()["sizes"] == {"parameters": 6, "constraints": 7, "examples": 300}
        job_id = submit(client, spec)
        wait_status(client, job_id, {"succeeded"}, timeout_s=120)
        model = client.get(f"/v1/jobs/{job_id}/result").json()["model"]
    assert model["type"] == "calibrated_lattice" and model["sizes"] == [3, 2]
    assert [f["column"] for f in model["features"]] == ["rating", "distance"]


def test_a_missing_column_is_a_problem_naming_it(service: Stack):
    spec = copy.deepcopy(inline_lattice_spec())
    spec["model"]["features"][1]["column"] = "distanse"
    with service.client("alpha") as client:
        response = client.post("/v1/validate", json=spec)
    assert response.status_code == 422, response.text
    assert "objective.data.table" in response.text and "'distanse'" in response.text
