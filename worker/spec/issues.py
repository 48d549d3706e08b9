"""pydantic's validation errors as plain ``(path, message)`` issues: the path without the
validator's own names (``constrained-int``, ``function-after[...]``, union members) and a
message that says what to give instead, one per path.

``solver.iterations: give 'auto' or a number >= 1 (got -5)`` rather than two lines that
read ``solver.iterations.constrained-int: Input should be greater than or equal to 1``; of
a union's members, the one that got deepest speaks (a rate term's ``rhs.scale``, not "give
a number" for ``rhs``). The
spec (:func:`worker.spec.models.parse_spec`), a Result read by the CLI and the HTTP API's
request checks (``service/problems.py``) all speak through :func:`readable_issues`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from worker.spec.locations import format_location

#: Names pydantic-core gives its own validators in error locations (never a field's name).
_VALIDATOR_PREFIXES = ("constrained-", "function-", "lax-or-strict", "json-or-python",
                       "tagged-union", "is-instance", "is-subclass", "typed-dict",
                       "definition-ref", "nullable", "chain[", "literal[", "union[")

#: The names pydantic gives the members of a plain union of built-in types.
_BUILTIN_MEMBERS = frozenset({"int", "float", "str", "bool", "list", "dict", "none"})

#: Error type -> what to give instead (formatted with the error's ``ctx``).
_WANTED = {
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number", "finite_number": "a finite number",
    "bool_type": "true or false", "bool_parsing": "true or false",
    "string_type": "a string", "list_type": "a list", "tuple_type": "a list",
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
    "greater_than": "a number > {gt}", "greater_than_equal": "a number >= {ge}",
    "less_than": "a number < {lt}", "less_than_equal": "a number <= {le}",
    "too_short": "at least {min_length} item(s)", "too_long": "at most {max_length} item(s)",
    "string_too_short": "at least {min_length} character(s)",
    "string_too_long": "at most {max_length} character(s)",
    "literal_error": "{expected}", "enum": "{expected}",
}

#: Error type -> the whole message (formatted with the error's ``ctx``).
_MESSAGES = {
    "missing": "required; add it",
    "extra_forbidden": "not a known field; remove it or check its spelling",
    "union_tag_invalid": "unknown type '{tag}'; give one of {expected_tags}",
    "union_tag_not_found": "give its {discriminator} field (which type of entry this is)",
}


def validator_name(part: Any) -> bool:
    """True for a location part that names one of pydantic's validators or a built-in
    union member, not a field (a model's union members are the caller's to hide)."""
    return isinstance(part, str) and (part.startswith(_VALIDATOR_PREFIXES)
                                      or part in _BUILTIN_MEMBERS)


def readable_issues(errors: Iterable[Any], hidden: Callable[[Any], bool] = validator_name,
                    ) -> list[tuple[str, str]]:
    """``(path, message)`` for each path of pydantic ``errors`` (``error.errors()``);
    ``hidden`` drops location parts that are not fields (default: validator names)."""
    wanted: dict[str, list[str]] = {}
    given: dict[str, Any] = {}
    other: dict[str, list[str]] = {}
    for item in errors:
        path = format_location(tuple(p for p in item["loc"] if not hidden(p)))
        ctx = {key: str(value) for key, value in (item.get("ctx") or {}).items()}
        kind = item["type"]
        if kind in _WANTED:
            wanted.setdefault(path, []).append(_WANTED[kind].format(**ctx))
            given[path] = item.get("input")
        else:
            message = _MESSAGES[kind].format(**ctx) if kind in _MESSAGES else \
                str(item["msg"]).removeprefix("Value error, ")
            other.setdefault(path, []).append(message)
    for path in list(wanted):   # a union member that got further says what is wrong there
        if any(deeper.startswith((f"{path}.", f"{path}[")) for deeper in [*wanted, *other]):
            del wanted[path]
    issues = []
    for path in dict.fromkeys([*wanted, *other]):
        parts = []
        if path in wanted:
            choices = " or ".join(dict.fromkeys(wanted[path]))
            parts.append(f"give {choices} (got {_shown(given[path])})")
        parts += list(dict.fromkeys(other.get(path, [])))
        issues.append((path, "; ".join(parts)))
    return issues


def _shown(value: Any) -> str:
    """The offending value, short enough for one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
