"""``solver.warm_start``: start from an earlier answer of the same problem's dimension
(docs/results.md "Warm starts"): a job of the same tenant on the service, or a Result JSON
file for the CLI and the library."""

from __future__ import annotations

from pydantic import Field

from worker.spec.strict import StrictModel, keyed_union


class WarmStartJob(StrictModel):
    """An earlier job of the same tenant (the service only)."""

    job: str = Field(min_length=1, max_length=200)


class WarmStartResult(StrictModel):
    """A Result JSON file written by ``lighttouch solve -o`` (the CLI and the library)."""

    result: str = Field(min_length=1, max_length=4096)


WarmStart = keyed_union("job", WarmStartJob, WarmStartResult)
