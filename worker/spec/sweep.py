"""The spec's ``sweep``: one field of the spec set to each of several values, each variant
solved in turn (docs/results.md "Trade-off sweeps").

``path`` names the field in the spec's JSON: names joined by dots, ``[k]`` for element k of
a list and ``[*]`` for every element (``constraints[*].rhs.scale``). The field's parent must
exist as a list element, and blocks left out of the spec are created empty (then their
defaults hold and the spec's own checks name a field that does not exist).
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from worker.spec.strict import StrictModel

#: The most values of one sweep.
MAX_SWEEP = 64
#: One step of a path: a name, ``[k]`` or ``[*]``.
STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+|\*)\]")


def path_steps(path: str) -> list[str | int]:
    """``constraints[0].rhs.scale`` -> ``["constraints", 0, "rhs", "scale"]`` (``"*"`` for
    ``[*]``); a ValueError saying what is wrong otherwise."""
    steps: list[str | int] = []
    at = 0
    while at < len(path):
        if steps and path[at] == ".":
            at += 1
        match = STEP.match(path, at)
        if match is None:
            raise ValueError(f"cannot read {path!r} at character {at}; write names joined "
                             "by dots, [k] or [*] for list elements")
        name, index = match.groups()
        steps.append(name if name is not None else "*" if index == "*" else int(index))
        at = match.end()
    if not steps or not isinstance(steps[0], str) or steps[0] == "sweep":
        raise ValueError(f"{path!r} does not name a field of the spec")
    return steps


class Sweep(StrictModel):
    """Solve the spec once per value of the field at ``path``, in the given order."""

    path: str = Field(min_length=1, max_length=500)
    values: list[float | int | str | bool] = Field(min_length=1, max_length=MAX_SWEEP)

    @field_validator("path")
    @classmethod
    def _readable(cls, path: str) -> str:
        path_steps(path)
        return path
