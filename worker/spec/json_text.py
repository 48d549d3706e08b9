"""Decoding a spec's JSON text so that every value the models could choke on is refused
first, with its JSON path: NaN and Infinity, integers of thousands of digits, strings with
lone surrogates (not UTF-8), and nesting deeper than any spec needs.

Python's decoder accepts ``NaN``/``Infinity`` and lone ``\\udc80`` escapes, raises a bare
``ValueError`` for an integer over 4,300 digits and ``RecursionError`` about 1,000 levels
deep; :func:`decode_spec_json` turns each into a :class:`~worker.errors.SpecError`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from worker.errors import SpecError
from worker.spec.locations import format_location

#: Deepest nesting of arrays and objects a spec may use (a spec needs about 8).
MAX_DEPTH = 32
#: Most digits an integer may have (Python's own conversion limit).
MAX_DIGITS = sys.get_int_max_str_digits() or 4300


class _Refused:
    """A decoded value to refuse where it stands, with why."""

    def __init__(self, reason: str):
        self.reason = reason


def _non_finite(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number; give a finite number")


def _integer(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        return _Refused(f"an integer of {digits:,} digits is far too large for any field")
    return int(text)


def decode_spec_json(text: str, source: str = "the request body") -> Any:
    """The value of ``text``, or :class:`SpecError` naming each unusable value's path.

    ``source`` names the text in the message when it is not JSON at all.
    """
    try:
        value = _decode(text)
    except json.JSONDecodeError as error:
        raise SpecError.at("", f"{source} is not JSON: {error.msg} at line {error.lineno} "
                           f"column {error.colno}") from None
    except RecursionError:
        raise SpecError.at("", f"{source} nests arrays and objects deeper than {MAX_DEPTH} "
                           "levels; no spec needs that") from None
    issues = list(_unusable(value))
    if issues:
        raise SpecError(issues[:20])
    return value


def _decode(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_non_finite)
    except json.JSONDecodeError:
        raise
    except ValueError:           # an integer over the digit limit: decode it as a refusal
        return json.loads(text, parse_constant=_non_finite, parse_int=_integer)


def _unusable(root: Any) -> Iterator[tuple[str, str]]:
    """(path, reason) of every refused value, string that is not UTF-8, and level too deep."""
    if not isinstance(root, dict | list):
        yield from _scalar_issues(root, ())
        return
    stack: list[tuple[Any, tuple[Any, ...]]] = [(root, ())]
    while stack:
        value, location = stack.pop()
        if len(location) > MAX_DEPTH:
            yield format_location(location), (f"nested deeper than {MAX_DEPTH} levels; no "
                                               "spec needs that")
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for name, item in items:
            if isinstance(name, str) and not _is_utf8(name):
                yield format_location(location), f"the key {name!r} is not valid UTF-8 text"
            if isinstance(item, dict | list):
                stack.append((item, (*location, name)))
            elif isinstance(item, _Refused | str):
                yield from _scalar_issues(item, (*location, name))


def _scalar_issues(value: Any, location: tuple[Any, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(value, _Refused):
        yield format_location(location), value.reason
    elif isinstance(value, str) and not _is_utf8(value):
        yield format_location(location), ("holds a lone surrogate (\\ud800-\\udfff): not "
                                          "valid UTF-8 text")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
