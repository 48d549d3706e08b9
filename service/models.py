"""The HTTP API's response bodies (openapi/openapi.json); the Result is
:class:`worker.result.Result`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from worker.queue.state import JobState
from worker.result import Summary


class ApiModel(BaseModel):
    """Base: the documented fields, nothing else."""

    model_config = ConfigDict(extra="forbid")


class JobLinks(ApiModel):
    """Where to follow, fetch or cancel a job."""

    self: str
    events: str
    result: str
    solution: str


class Submitted(ApiModel):
    """The answer to a submission (replayed as-is for a repeated ``Idempotency-Key``)."""

    id: str
    status: JobState
    links: JobLinks


class JobProgress(BaseModel):
    """A progress report of a running job (the running average of the iterates at one
    iteration): the latest while it runs, the last it sent (history) once it has ended.

    Fields the engine may add to its progress reports later are ignored, not errors.
    """

    iteration: int
    iterations: int
    objective: float | None
    max_violation: float | None
    constraint_checks: int
    elapsed_s: float


class JobView(ApiModel):
    """A job's status, timestamps, figures and error: while it runs, its latest ``progress``;
    once it has succeeded, its Result's ``summary`` (the figures to read), with the last
    progress report kept as ``last_progress`` (history, not the outcome)."""

    id: str
    status: JobState
    name: str | None = None
    #: the spec's solver.algorithm; for "auto", the algorithm it chose once the job succeeded
    algorithm: str | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    progress: JobProgress | None = None
    last_progress: JobProgress | None = None
    summary: Summary | None = None
    error: str | None = None
    links: JobLinks


class JobPage(ApiModel):
    """One page of the tenant's jobs, newest first; ``next`` is the following page's URL
    (with the same filters)."""

    jobs: list[JobView]
    next: str | None = None


class PlacementSummary(ApiModel):
    """Where a job runs and why (docs/scale.md#the-fields): ``in_process``, ``cluster`` (the
    Dask scheduler at ``LIGHTTOUCH_DASK_SCHEDULER``) or ``local_cluster``; the estimates in
    bytes of the whole job in one process, the budget it is checked against
    (``LIGHTTOUCH_MAX_JOB_BYTES``; null: none), the driver and each Dask worker (empty in
    process)."""

    where: Literal["in_process", "cluster", "local_cluster"]
    reason: str
    in_process_bytes: int | None
    max_job_bytes: int | None
    driver_bytes: int
    worker_bytes: list[int]


class SpecSummary(ApiModel):
    """The dry run of a spec: sizes, the algorithm ``auto`` picks, this process's memory
    estimate, where the job runs, notes."""

    valid: bool
    sizes: dict[str, int]
    algorithm: str
    memory_estimate_bytes: int
    placement: PlacementSummary
    notes: list[str]


class Health(ApiModel):
    """Liveness and readiness answers; both say whether ``/v1`` needs an API key (false in
    open dev mode), which the dashboard reads to decide whether to ask for one."""

    status: str
    workers: int | None = None
    api_key_required: bool | None = None


def job_links(job_id: str) -> JobLinks:
    """The links of job ``job_id`` (paths relative to the API's root)."""
    base = f"/v1/jobs/{job_id}"
    return JobLinks(self=base, events=f"{base}/events", result=f"{base}/result",
                    solution=f"{base}/solution.npy")


class AlgorithmView(ApiModel):
    """One algorithm of the catalogue and what it takes."""

    name: str
    options: str | None
    rates: bool
    networks: bool
    needs_l2: bool


class AlgorithmList(ApiModel):
    """What ``solver.algorithm`` accepts (``auto`` first) and each algorithm's traits."""

    names: list[str]
    algorithms: list[AlgorithmView]
