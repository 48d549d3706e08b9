"""``solver.warm_start``: start from an earlier answer of the same problem's dimension
(docs/results.md "Warm starts"): a job of the same tenant on the service, or a Result JSON
file for the CLI and the library."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag

from worker.spec.strict import StrictModel


class WarmStartJob(StrictModel):
    """An earlier job of the same tenant (the service only)."""

    job: str = Field(min_length=1, max_length=200)


class WarmStartResult(StrictModel):
    """A Result JSON file written by ``lighttouch solve -o`` (the CLI and the library)."""

    result: str = Field(min_length=1, max_length=4096)


def _form(value: Any) -> str:
    """Which form a ``warm_start`` value takes: a job when it names a ``job``."""
    if isinstance(value, dict):
        return "WarmStartJob" if "job" in value else "WarmStartResult"
    return "WarmStartJob" if isinstance(value, WarmStartJob) else "WarmStartResult"


WarmStart = Annotated[Annotated[WarmStartJob, Tag("WarmStartJob")]
                      | Annotated[WarmStartResult, Tag("WarmStartResult")],
                      Discriminator(_form)]
