"""The data references of a parsed spec, found by walking it, and the policy checks that can
be made on them before anything is read (see :func:`worker.data.sources.check_uri`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel

from worker.data.refs import DataRef
from worker.data.sources import check_uri


def data_refs(value: object, path: str = "") -> Iterator[tuple[str, DataRef]]:
    """Every :class:`DataRef` inside ``value`` (a pydantic model, list or dict), with its
    JSON path (``objective.data.features``, ``constraints[2].data.groups.a``)."""
    if isinstance(value, DataRef):
        yield path, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from data_refs(getattr(value, name), f"{path}.{name}" if path else name)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from data_refs(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from data_refs(item, f"{path}.{key}")


def check_references(spec: BaseModel, roots: Sequence[Path]) -> None:
    """Refuse the first reference of ``spec`` whose scheme or ``file://`` path the policy
    refuses, by its JSON path (:class:`~worker.errors.DataError`); reads nothing."""
    for path, ref in data_refs(spec):
        check_uri(ref.uri, path, roots)
