"""solver.warm_start over HTTP against a real API, worker and Redis: a tenant's finished job
warm-starts its next one; another tenant's job is a 422 naming the field."""

from __future__ import annotations

from tests.local_stack import Stack, small_spec
from tests.service.conftest import problem, submit, wait_status


def test_warm_starts_stay_within_a_tenant(service: Stack):
    with service.client("alpha") as alpha, service.client("beta") as beta:
        first = submit(alpha, small_spec(iterations=5000))
        wait_status(alpha, first, {"succeeded"}, timeout_s=120)
        spec = small_spec(iterations=5000)
        spec["solver"]["warm_start"] = {"job": first}
        second = submit(alpha, spec)
        wait_status(alpha, second, {"succeeded"}, timeout_s=120)
        kinds = {m["kind"] for m in alpha.get(f"/v1/jobs/{second}/result").json()["mixture"]}
        assert kinds <= {"warm_start", "iterate", "average", "polished"}
        body = problem(beta.post("/v1/jobs", json=spec), 422)
        paths = [issue["path"] for issue in body["errors"]]
        assert paths == ["solver.warm_start.job"] and "no job" in body["detail"]
