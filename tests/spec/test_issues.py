"""pydantic's errors as plain issues: no validator names in paths, one message per path
saying what to give, the deepest union member speaking."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from worker.spec.issues import readable_issues, validator_name


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError("must be positive; give a number above 0")
    return value


class Term(BaseModel):
    model_config = ConfigDict(extra="forbid")
    metric: Literal["a", "b"]
    scale: float = 1.0


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    iterations: Literal["auto"] | Annotated[int, Field(ge=1)] = "auto"
    step: Annotated[float, AfterValidator(_positive)] = 1.0
    rhs: float | Term = 0.0
    names: list[str] = Field(default_factory=list, min_length=1)


def issues(**given) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        Options(**given)
    return readable_issues(caught.value.errors(include_url=False),
                           lambda part: validator_name(part) or part == "Term")


@pytest.mark.parametrize(("given", "expected"), [
    ({"iterations": -5}, [("iterations", "give 'auto' or a number >= 1 (got -5)")]),
    ({"iterations": "many"}, [("iterations", "give 'auto' or an integer (got 'many')")]),
    ({"step": -1.0}, [("step", "must be positive; give a number above 0")]),
    ({"step": "x"}, [("step", "give a number (got 'x')")]),
    ({"rhs": {"metric": "c"}}, [("rhs.metric", "give 'a' or 'b' (got 'c')")]),
    ({"rhs": {"metric": "a", "scale": "big"}}, [("rhs.scale", "give a number (got 'big')")]),
    ({"names": []}, [("names", "give at least 1 item(s) (got [])")]),
    ({"surprise": 1}, [("surprise", "not a known field; remove it or check its spelling")]),
])
def test_each_path_says_what_to_give(given, expected):
    found = issues(**given)
    assert found == expected
    assert not any("constrained" in path or "function-" in path for path, _ in found)


def test_a_long_value_is_shortened():
    [(path, message)] = issues(iterations="x" * 500)
    assert path == "iterations" and len(message) < 120 and message.endswith("...)")
