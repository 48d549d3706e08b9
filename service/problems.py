"""RFC 9457 ``application/problem+json``: every error response is rendered by :func:`problem`.

Errors of the one hierarchy (:class:`~worker.errors.LightTouchError`) go straight to it;
FastAPI's request-validation errors, Starlette's routing errors and Redis failures (503) are
first turned into members of that hierarchy; anything else is a 500 that is logged, never
leaked, and answered without closing the connection (:class:`UnexpectedErrors`).
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import HTTPError, InvalidRequest, NotReady, ServiceError
from worker.errors import (
    DataError,
    JobConflict,
    JobNotFound,
    LightTouchError,
    SolverError,
    SpecError,
    TooManyJobs,
)
from worker.spec.issues import readable_issues

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:lighttouch:problem:"

log = logging.getLogger(__name__)


class Issue(BaseModel):
    """One thing wrong with the input: where (``a.b[2]``) and what."""

    path: str
    message: str


class Problem(BaseModel):
    """An RFC 9457 problem document; ``errors`` lists each issue of an invalid input."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[Issue] | None = None


def problem_type(error: LightTouchError) -> str:
    """``SpecError`` → ``urn:lighttouch:problem:spec-error`` (``HTTPError`` → ``http-error``)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", type(error).__name__)
    return TYPE_PREFIX + words.lower()


#: The engine's and the queue's errors as HTTP: (status, title), most specific class first.
ENGINE_STATUS: tuple[tuple[type[LightTouchError], int, str], ...] = (
    (SpecError, 422, "Invalid problem spec"),
    (DataError, 422, "Unusable problem data"),
    (SolverError, 500, "Solver failure"),
    (JobNotFound, 404, "Job not found"),
    (JobConflict, 409, "Job state conflict"),
    (TooManyJobs, 429, "Too many active jobs"),
    (LightTouchError, 400, "LightTouch error"),
)


def status_and_title(error: LightTouchError) -> tuple[int, str]:
    """The HTTP status and title of an error: an edge error's own, else the engine table's."""
    if isinstance(error, ServiceError):
        return error.status_code, error.title
    return next((status, title) for kind, status, title in ENGINE_STATUS
                if isinstance(error, kind))


def response_headers(error: LightTouchError) -> dict[str, str]:
    """Headers the error implies: an edge error's own, ``Retry-After`` for a full tenant."""
    if isinstance(error, TooManyJobs):
        return {"Retry-After": str(error.retry_after_s)}
    return getattr(error, "headers", {})


def problem(request: Request, error: LightTouchError) -> JSONResponse:
    """The problem+json response for ``error`` (status, title, headers from its class)."""
    status, title = status_and_title(error)
    issues = getattr(error, "issues", None)
    body = Problem(type=problem_type(error), title=title, status=status,
                   detail=str(error), instance=request.url.path,
                   errors=[Issue(path=p, message=m) for p, m in issues] if issues else None)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status,
                        headers=response_headers(error), media_type=MEDIA_TYPE)


async def _lighttouch_error(request: Request, error: LightTouchError) -> JSONResponse:
    return problem(request, error)


async def _request_validation_error(request: Request,
                                    error: RequestValidationError) -> JSONResponse:
    return problem(request, InvalidRequest(readable_issues(error.errors())))


async def _http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
    headers = dict(error.headers or {})
    detail = str(error.detail)
    if error.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    elif error.status_code == 404 and detail == "Not Found":  # no route, not a missing job
        detail = (f"no route of this API matches {request.url.path[:200]!r}; its paths are "
                  "listed in /openapi.json")
    return problem(request, HTTPError(error.status_code, detail, headers))


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path (Starlette's 405 names only the
    first route's)."""
    return [method for method in _METHODS
            if any(route.matches({**request.scope, "method": method})[0] == Match.FULL
                   for route in request.app.router.routes)]


_METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


async def _redis_error(request: Request, error: RedisError) -> JSONResponse:
    log.warning("Redis failed on %s %s: %s", request.method, request.url.path, error)
    return problem(request, NotReady(f"the job store (Redis) failed: {error}; retry shortly"))


class UnexpectedErrors:
    """ASGI middleware: an exception no handler took becomes the logged 500 problem, sent as
    an ordinary response, so the client's connection stays open (Starlette's own last-resort
    handler re-raises, and the server then drops the connection). An exception after the
    response started (inside an event stream) is left to the server."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracked)
        except Exception:
            if started:
                raise
            request = Request(scope)
            log.exception("unhandled error on %s %s", request.method, request.url.path)
            response = problem(request, HTTPError(500, "internal error; it has been logged"))
            await response(scope, receive, send)


def install(app: FastAPI) -> None:
    """Register the handlers and the last-resort middleware on ``app``."""
    app.add_exception_handler(LightTouchError, _lighttouch_error)
    app.add_exception_handler(RequestValidationError, _request_validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RedisError, _redis_error)
    app.add_middleware(UnexpectedErrors)


_MEANINGS = {
    400: "a malformed header (Last-Event-ID); errors[] names it",
    401: "missing or unknown API key",
    404: "no such job for this API key",
    409: "the job's state does not allow this (yet)",
    413: "request body over LIGHTTOUCH_MAX_BODY_BYTES",
    415: "the body is not sent as application/json",
    422: "invalid spec, data or parameter; errors[] names each field",
    429: "the tenant is at LIGHTTOUCH_MAX_ACTIVE_JOBS; see Retry-After",
    503: "Redis unreachable (or, for /readyz, no live worker; title 'Workers warming up' "
         "while one loads its kernels)",
}


def problem_responses(*statuses: int) -> dict[int | str, dict]:
    """OpenAPI ``responses`` entries: a problem+json body for each of ``statuses``."""
    schema = {"$ref": "#/components/schemas/Problem"}
    return {status: {"description": _MEANINGS[status],
                     "content": {MEDIA_TYPE: {"schema": schema}}} for status in statuses}
