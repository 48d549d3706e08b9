"""The base of every spec model: :class:`StrictModel`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Tag


class StrictModel(BaseModel):
    """Base model: unknown fields are errors, and values are never converted ("4" is not the
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
