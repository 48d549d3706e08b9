"""``/v1``: submit, follow, fetch, cancel and list jobs; validate specs (openapi/openapi.json)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Query, Response
from starlette.concurrency import run_in_threadpool

from service import events, jobs
from service.deps import Body, RedisDep, SettingsDep, StreamRedisDep, Tenant
from service.models import JobPage, JobView, SpecSummary, Submitted
from service.problems import problem_responses
from service.validation import summarize_bounded
from worker.queue.records import JobFilter, load_job
from worker.queue.state import JobState
from worker.queue.submit import MAX_LISTED_JOBS
from worker.result import Result
from worker.spec.models import ALGORITHMS, parse_spec

router = APIRouter(prefix="/v1", tags=["jobs"], responses=problem_responses(401, 422, 503))

SPEC_BODY = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": {"$ref": "#/components/schemas/Spec"}}}}}
JobId = Annotated[str, Path(max_length=64, description="the id returned by POST /v1/jobs")]


@router.post("/jobs", status_code=202, response_model=Submitted, openapi_extra=SPEC_BODY,
             responses=problem_responses(409, 413, 415, 429))
def submit_job(body: Body, tenant: Tenant, redis: RedisDep, settings: SettingsDep,
               response: Response,
               idempotency_key: Annotated[str | None, Header(max_length=256)] = None
               ) -> Submitted:
    """Validate a spec and queue it; a repeated ``Idempotency-Key`` replays the first answer.
    422 also for a job over the per-job memory budget with nowhere else to run, placed from
    its data's headers as its worker would (docs/scale.md): nothing is queued."""
    spec = parse_spec(body.value)
    answer, replayed = jobs.submit(redis, settings, tenant, spec, body.text, idempotency_key)
    response.headers["Location"] = answer.links.self
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return answer


@router.get("/jobs", response_model=JobPage)
def list_jobs(tenant: Tenant, redis: RedisDep,
              offset: Annotated[int, Query(ge=0, le=MAX_LISTED_JOBS)] = 0,
              limit: Annotated[int, Query(ge=1, le=100)] = 20,
              status: Annotated[JobState | None, Query(
                  description="only jobs with this status")] = None,
              algorithm: Annotated[Literal[ALGORITHMS] | None, Query(  # type: ignore[valid-type]
                  description="only jobs whose spec asked for this algorithm (for auto: "
                              "the one it chose, once succeeded)")] = None) -> JobPage:
    """This tenant's jobs, newest first; ``status`` and ``algorithm`` filter them (``offset``
    then counts the jobs shown)."""
    return jobs.page(redis, tenant, offset, limit, JobFilter(status, algorithm))


@router.get("/jobs/{job_id}", response_model=JobView, responses=problem_responses(404))
def get_job(job_id: JobId, tenant: Tenant, redis: RedisDep) -> JobView:
    """Status, timestamps, figures and error of a job: its latest progress while it runs, its
    Result's summary once it has succeeded."""
    return jobs.view(redis, tenant, job_id)


@router.delete("/jobs/{job_id}", response_model=JobView, responses=problem_responses(404, 409))
def cancel_job(job_id: JobId, tenant: Tenant, redis: RedisDep) -> JobView:
    """Cancel a job: a queued one is dropped, a running one has its process stopped."""
    return jobs.cancel(redis, tenant, job_id)


@router.get("/jobs/{job_id}/result", response_class=Response,
            responses={200: {"model": Result, "description": "the Result"},
                       **problem_responses(404, 409)})
def get_result(job_id: JobId, tenant: Tenant, redis: RedisDep) -> Response:
    """The Result of a succeeded job (409 until then)."""
    return Response(jobs.result_json(redis, tenant, job_id), media_type="application/json")


@router.get("/jobs/{job_id}/solution.npy", response_class=Response,
            responses={200: {"description": "a float64 .npy array: (d,), or (k, d) for mixture",
                             "content": {"application/octet-stream": {}}},
                       **problem_responses(404, 409)})
def get_solution(job_id: JobId, tenant: Tenant, redis: RedisDep,
                 vector: Literal["projected", "mean", "mixture"] | None = None) -> Response:
    """A result vector as ``.npy``: ``projected`` (default when present, else ``mean``)."""
    content = jobs.solution_npy(redis, tenant, job_id, vector)
    return Response(content, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{job_id}.npy"'})


@router.get("/jobs/{job_id}/events", response_class=Response,
            responses={200: {"description": "Server-Sent Events: progress, status, result "
                                            "(with the Result's summary)",
                             "content": {events.MEDIA_TYPE: {}}},
                       204: {"description": "the job has ended and its last event was seen"},
                       **problem_responses(400, 404)})
async def job_events(job_id: JobId, tenant: Tenant, redis: RedisDep,
                     stream_redis: StreamRedisDep, settings: SettingsDep,
                     last_event_id: Annotated[str | None, Header(
                         max_length=64, description="the id of the last event received "
                         "(<ms>-<seq>); 400 if it is not one")] = None
                     ) -> Response:
    """Follow a job's events; reconnect with ``Last-Event-ID`` to resume exactly once."""
    await run_in_threadpool(load_job, redis, tenant, job_id)
    cursor = events.stream_position(last_event_id)
    return await events.event_response(stream_redis, job_id, cursor, settings.sse_keepalive_s)


@router.post("/validate", response_model=SpecSummary, openapi_extra=SPEC_BODY,
             responses=problem_responses(413, 415))
def validate_spec(body: Body, tenant: Tenant, settings: SettingsDep) -> SpecSummary:
    """Dry run: parse, read the data, compile; sizes, algorithm, memory estimate, where the
    job runs (in process or on the Dask cluster, and why: docs/scale.md), or the errors (422
    also for a job over the per-job memory budget with nowhere else to run, or data that need
    more memory or time than a check may take: the data are read in a bounded child
    process)."""
    return SpecSummary(**summarize_bounded(
        body.value, max_job_bytes=settings.max_job_bytes,
        timeout_s=settings.validate_timeout_s, processes=settings.validate_processes))
