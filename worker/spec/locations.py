"""Where a spec error is: JSON paths for error locations, and the names pydantic puts in them
that are not fields (the members of the spec's discriminated unions)."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import Tag


def format_location(location: tuple[Any, ...]) -> str:
    """``('constraints', 2, 'pairs', 5)`` → ``constraints[2].pairs[5]``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def union_tags(union: Any) -> set[str]:
    """The tags of the members of a discriminated union (``Annotated[A | B, ...]``): their
    ``type`` values and, for members marked with a :class:`~pydantic.Tag`, the tag."""
    tags: set[str] = set()
    for member in get_args(get_args(union)[0]):
        model, *metadata = get_args(member) or (member,)
        tags |= {mark.tag for mark in metadata if isinstance(mark, Tag)}
        tags |= set(get_args(model.model_fields["type"].annotation))
    return tags
