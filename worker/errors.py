"""The one exception hierarchy of LightTouch.

Every error a caller can act on derives from :class:`LightTouchError`; the HTTP edge maps
each class to its status and an RFC 9457 problem response (``service/problems.py``), the CLI
prints ``str(error)`` and exits non-zero. The engine knows nothing of HTTP.

::

    LightTouchError                 a caller can act on this; str() says what to fix
    ├── ConfigError                 a LIGHTTOUCH_* variable is invalid (at start)
    ├── SpecError                   the problem spec is invalid (names the JSON path)
    │   └── LossRefused             the chosen method cannot take the objective's loss
    ├── DataError                   a data reference could not be read or does not fit
    ├── SolverError                 a numeric step (LP, QP) failed on valid input
    ├── JobNotFound                 no queued job with this id for this tenant (or it expired)
    ├── JobConflict                 the job's state does not allow this (yet, or any more)
    └── TooManyJobs                 the tenant is at its cap of queued and running jobs

Inside the numeric core, outcomes are statuses, not exceptions; exceptions are for mistakes
the caller can fix.
"""

from __future__ import annotations


class LightTouchError(Exception):
    """Base class: something the caller can act on; ``str()`` says what to fix."""


class SpecError(LightTouchError):
    """The spec is invalid. ``issues`` lists ``(path, message)`` pairs, path like ``a.b[2]``."""

    def __init__(self, issues: list[tuple[str, str]]):
        self.issues = list(issues)
        super().__init__("; ".join(f"{path}: {message}" if path else message
                                   for path, message in self.issues))

    @classmethod
    def at(cls, path: str, message: str) -> SpecError:
        """One issue at one JSON path."""
        return cls([(path, message)])


class LossRefused(SpecError):
    """``solver.algorithm`` names a method that cannot take the objective's loss: names the
    loss, the method and the methods that can."""

    def __init__(self, loss: str, method: str, why: str, takers: list[str]):
        self.loss, self.method, self.takers = loss, method, list(takers)
        super().__init__([("solver.algorithm", f"{method} cannot take the {loss} loss ({why});"
                           f" methods that can: {', '.join(['auto', *takers])}")])


class DataError(LightTouchError):
    """A data reference (inline, ``data:`` or ``file://``) could not be read or does not fit.
    ``issues`` is the one ``(path, message)`` pair, as in :class:`SpecError`."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)

    @property
    def issues(self) -> list[tuple[str, str]]:
        """``[(path, message)]``, or ``[]`` when no path is known."""
        return [(self.path, self.message)] if self.path else []


class SolverError(LightTouchError):
    """A numeric step (shrinking LP, projection QP) failed on input that validated."""

    @classmethod
    def diverged(cls) -> SolverError:
        """The run's iterates or their values are not finite: what to change."""
        return cls("the run diverged: its iterates or their objective values are not finite "
                   "numbers (NaN or infinite); lower solver.eta_w or solver.gamma (or leave "
                   "them \"auto\"), or give finite bounds")


class ConfigError(LightTouchError):
    """A ``LIGHTTOUCH_*`` environment variable has an invalid value (names it)."""


class JobNotFound(LightTouchError):
    """No job with this id belongs to the caller's tenant (or it has expired)."""

    def __init__(self, job_id: str):
        super().__init__(f"no job {job_id!r} for this API key (jobs expire after "
                         "LIGHTTOUCH_RESULT_TTL_S once finished)")


class JobConflict(LightTouchError):
    """The job's state does not allow the request (e.g. a result while it still runs)."""


class TooManyJobs(LightTouchError):
    """The tenant already has ``limit`` queued and running jobs; a slot may free up in about
    ``retry_after_s`` seconds."""

    def __init__(self, limit: int, retry_after_s: int):
        super().__init__(f"this tenant already has {limit} queued or running jobs "
                         "(LIGHTTOUCH_MAX_ACTIVE_JOBS); wait for one to finish or cancel one")
        self.limit = limit
        self.retry_after_s = retry_after_s
