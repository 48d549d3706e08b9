"""Typed stats: every stage of a solve returns its own record, and the Result's ``stats`` is
their merge, made once at the end (:func:`merged`).

A record is a dataclass with :class:`Stats` among its bases; each field is one ``stats``
entry under the field's name, or under the key :func:`stat` gives it. A field that is None
is left out (a figure the stage did not measure); a field holding a record or a mapping
contributes its entries in its place. Merging refuses a key two stages both write (a later
stage does not rewrite an earlier one's figure) unless every record marks it ``summed``:
communication is counted by each stage that communicates and the Result reports the sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, fields
from typing import Any

#: What a ``stats`` entry may hold.
Value = float | int | str | bool


def stat(key: str | None = None, *, default: Any = None, summed: bool = False) -> Any:
    """A record's field stored under ``key`` (default: the field's name); ``summed``: the
    merge adds the values of every record that has the key."""
    return field(default=default, metadata={"key": key, "summed": summed})


class Stats:
    """The base of a stage's record: its entries by :meth:`entries` and :meth:`as_stats`."""

    def entries(self) -> list[tuple[str, Value, bool]]:
        """(key, value, summed) of every entry, in field order."""
        found: list[tuple[str, Value, bool]] = []
        for item in fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if value is None:
                continue
            if isinstance(value, Stats):
                found.extend(value.entries())
            elif isinstance(value, Mapping):
                found.extend((key, entry, False) for key, entry in value.items())
            else:
                found.append((item.metadata.get("key") or item.name, value,
                              item.metadata.get("summed", False)))
        return found

    def as_stats(self) -> dict[str, Value]:
        """The record's entries as a ``stats`` dict (see the module docstring)."""
        return merged(self)


def merged(*records: Stats | None) -> dict[str, Value]:
    """The ``stats`` of the records (None: a stage that did not run), in order.

    Raises
    ------
    ValueError
        Two records write one key that is not summed in both.
    """
    stats: dict[str, Value] = {}
    summed: dict[str, bool] = {}
    for record in records:
        if record is None:
            continue
        for key, value, adds in record.entries():
            if key not in stats:
                stats[key], summed[key] = value, adds
            elif adds and summed[key]:
                stats[key] += value
            else:
                raise ValueError(f"stats key {key!r} is written by two stages")
    return stats


__all__ = ["Stats", "Value", "merged", "stat"]
