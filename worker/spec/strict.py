"""The base of every spec model: :class:`StrictModel`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Base model: unknown fields are errors, and values are never converted ("4" is not the
    integer 4, ``true`` is not 1, 1.0 is not an integer)."""

    model_config = ConfigDict(extra="forbid", strict=True)
