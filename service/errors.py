"""Errors of the HTTP edge, in the engine's one hierarchy (:mod:`worker.errors`).

::

    LightTouchError                    (worker.errors: the engine's and the queue's errors)
    └── ServiceError
        ├── HTTPError                  a plain HTTP error from routing (404 no route, 405, ...)
        ├── InvalidRequest             422 a query, path or header parameter is invalid
        ├── Unauthorized               401 missing or unknown API key
        ├── BodyTooLarge               413 request body over LIGHTTOUCH_MAX_BODY_BYTES
        ├── UnsupportedMediaType       415 the body is not declared as JSON
        ├── BadEventId                 400 a Last-Event-ID that is no stream position
        ├── NotReady                   503 Redis unreachable or no live worker
        │   └── WarmingUp              503 no live worker yet, but one is warming up
        ├── RemoteProblem              (client side) the service answered with a problem
        └── ServiceUnreachable         (client side) no connection to the service

``headers`` carries response headers an error implies (``WWW-Authenticate``, ``Retry-After``).
"""

from __future__ import annotations

from http import HTTPStatus

from worker.errors import LightTouchError


class ServiceError(LightTouchError):
    """An error of the HTTP edge; ``str()`` is the problem's ``detail``, ``status_code`` and
    ``title`` its response's (the engine's and the queue's errors get theirs in
    ``service/problems.py``)."""

    status_code = 400
    title = "LightTouch error"
    headers: dict[str, str] = {}


class HTTPError(ServiceError):
    """A plain HTTP error raised by routing itself (unknown path, method not allowed)."""

    def __init__(self, status_code: int, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status_code = status_code
        self.title = HTTPStatus(status_code).phrase
        self.headers = dict(headers or {})


class InvalidRequest(ServiceError):
    """A query, path or header parameter is invalid; ``issues`` as in
    :class:`~worker.errors.SpecError`."""

    status_code = 422
    title = "Invalid request parameters"

    def __init__(self, issues: list[tuple[str, str]]):
        self.issues = issues
        super().__init__("; ".join(f"{path}: {message}" for path, message in issues))


class Unauthorized(ServiceError):
    """The request carries no API key, or one that maps to no tenant."""

    status_code = 401
    title = "Unauthorized"
    headers = {"WWW-Authenticate": 'Bearer realm="lighttouch"'}


class BodyTooLarge(ServiceError):
    """The request body is larger than the configured cap."""

    status_code = 413
    title = "Request body too large"

    def __init__(self, limit: int):
        super().__init__(f"the body exceeds {limit:,} bytes (LIGHTTOUCH_MAX_BODY_BYTES); put "
                         "large data in files and reference them by URI")


class UnsupportedMediaType(ServiceError):
    """The request body's Content-Type is not JSON."""

    status_code = 415
    title = "Unsupported media type"


class BadEventId(InvalidRequest):
    """A ``Last-Event-ID`` header that is not an event id of a stream (``<ms>-<seq>``, each
    at most 2^64 - 1)."""

    status_code = 400
    title = "Bad request"

    def __init__(self, message: str):
        super().__init__([("header.last-event-id", message)])


class NotReady(ServiceError):
    """The service cannot take jobs now."""

    status_code = 503
    title = "Service not ready"


class WarmingUp(NotReady):
    """No worker takes jobs yet, but one is warming up (loading its numba kernels)."""

    title = "Workers warming up"


class RemoteProblem(ServiceError):
    """The service answered a client request with an RFC 9457 problem: its ``type``,
    ``title``, ``status`` (also ``status_code``), ``detail``, and ``issues``, the
    ``(path, message)`` of each bad field (path like ``solver.iterations``) as in
    :class:`~worker.errors.SpecError`; ``str()`` is ``HTTP <status>: <detail>``."""

    title = "Service error"

    def __init__(self, status_code: int, detail: str, *, type: str = "about:blank",
                 title: str | None = None, issues: list[tuple[str, str]] | None = None):
        super().__init__(f"HTTP {status_code}: {detail}")
        self.status_code = status_code
        self.type = type
        self.title = title or _phrase(status_code)
        self.detail = detail
        self.issues = list(issues or [])

    @property
    def status(self) -> int:
        """The HTTP status (the problem's ``status`` field)."""
        return self.status_code

    @property
    def paths(self) -> list[str]:
        """The JSON path of each bad field."""
        return [path for path, _ in self.issues]


def _phrase(status_code: int) -> str:
    """The reason phrase of an HTTP status (``Service error`` for an unknown one)."""
    try:
        return HTTPStatus(status_code).phrase
    except ValueError:
        return RemoteProblem.title


class ServiceUnreachable(ServiceError):
    """The client could not reach the service (refused, reset, timed out)."""

    title = "Service unreachable"
