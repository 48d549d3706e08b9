"""The base of every spec model (unknown fields refused, values never converted), the bounded
scalar types the models share and :func:`keyed_union` for fields with two forms."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from worker.data.sizes import MAX_SIZE

#: The largest ``solver.iterations``: far beyond any time limit, well inside the kernels'
#: 64-bit counters.
MAX_ITERATIONS = 2**50
#: The largest step scale, penalty weight or regularization weight: far beyond any useful
#: value, and small enough that one step cannot overflow a float.
MAX_SCALE = 1e12

#: A coordinate index (negative ones are refused with the valid range when compiled).
CoordinateIndex = Annotated[int, Field(ge=-MAX_SIZE, le=MAX_SIZE)]
#: A count that sizes an array (minibatch, groups, partition rows).
Count = Annotated[int, Field(ge=1, le=MAX_SIZE)]
#: A positive scale of a step or penalty.
Scale = Annotated[float, Field(gt=0, le=MAX_SCALE, allow_inf_nan=False)]
#: A regularization weight.
Weight = Annotated[float, Field(ge=0.0, le=MAX_SCALE, allow_inf_nan=False)]


class StrictModel(BaseModel):
    """Base: unknown fields are refused and values are never converted (the string "4" is not the
    integer 4, ``true`` is not 1, 1.0 is not an integer)."""

    model_config = ConfigDict(extra="forbid", strict=True)


def keyed_union(key: str, with_key: type[StrictModel], without_key: type[StrictModel]) -> Any:
    """The type ``with_key | without_key`` for a field, told apart by whether the value has
    the field ``key`` (so an error names the fields of the one form meant, not of both)."""
    def form(value: Any) -> str:
        chosen = (key in value) if isinstance(value, dict) else isinstance(value, with_key)
        return with_key.__name__ if chosen else without_key.__name__

    return Annotated[Annotated[with_key, Tag(with_key.__name__)]
                     | Annotated[without_key, Tag(without_key.__name__)], Discriminator(form)]


def refusing(*keys: str, because: str) -> Any:
    """A ``before`` validator refusing a value that has any of ``keys``, with ``because``:
    each data shape names the fields that belong to the other one."""
    def refuse(cls: type, raw: Any) -> Any:
        if isinstance(raw, dict) and any(key in raw for key in keys):
            raise ValueError(because)
        return raw
    return model_validator(mode="before")(classmethod(refuse))
