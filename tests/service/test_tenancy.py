"""Tenants see only their own jobs (another tenant's job is a 404); bad keys are 401."""

from __future__ import annotations

import pytest

from tests.local_stack import Stack, small_spec
from tests.service.conftest import problem, submit, wait_status

JOB_ROUTES = [("GET", ""), ("GET", "/result"), ("GET", "/solution.npy"), ("GET", "/events"),
              ("DELETE", "")]


@pytest.fixture(scope="module")
def alphas_job(service: Stack) -> str:
    """A succeeded job of tenant alpha."""
    with service.client("alpha") as client:
        job_id = submit(client, small_spec())
        wait_status(client, job_id, {"succeeded"})
    return job_id


@pytest.mark.parametrize(("method", "suffix"), JOB_ROUTES)
def test_another_tenants_job_is_not_found(service: Stack, alphas_job: str, method: str,
                                          suffix: str):
    with service.client("beta") as beta:
        body = problem(beta.request(method, f"/v1/jobs/{alphas_job}{suffix}"), 404)
    assert alphas_job in body["detail"]


def test_listing_shows_only_the_callers_jobs(service: Stack, alphas_job: str):
    with service.client("alpha") as alpha, service.client("beta") as beta:
        betas_job = submit(beta, small_spec())
        alpha_ids, beta_ids = ({job["id"] for job in client.get(
            "/v1/jobs", params={"limit": 100}).json()["jobs"]} for client in (alpha, beta))
    assert alphas_job in alpha_ids and alphas_job not in beta_ids
    assert betas_job in beta_ids and betas_job not in alpha_ids


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-key", "Basic a2V5OmtleQ==",
                                           "Bearer"])
@pytest.mark.parametrize(("method", "path"), [("POST", "/v1/jobs"), ("GET", "/v1/jobs"),
                                              ("POST", "/v1/validate"),
                                              *[(m, "/v1/jobs/{id}" + s) for m, s in JOB_ROUTES]])
def test_a_missing_or_unknown_key_is_401(service: Stack, alphas_job: str, authorization,
                                         method: str, path: str):
    headers = {"Authorization": authorization} if authorization else {}
    with service.client(None) as anonymous:
        response = anonymous.request(method, path.format(id=alphas_job), headers=headers,
                                     json=small_spec() if method == "POST" else None)
    problem(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")
