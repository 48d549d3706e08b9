"""Phrases every source uses in its messages."""

from __future__ import annotations

from worker.data.refs import uri_scheme


def brief(uri: str) -> str:
    """The URI for a message: a data: URI by its kind only, others quoted and truncated."""
    if uri_scheme(uri) == "data":
        return "the data: URI"
    return repr(uri if len(uri) <= 120 else uri[:117] + "...")


def too_large(uri: str, size: int | None, limit: int) -> str:
    """The message for content beyond the byte cap."""
    found = f"holds {size:,} bytes" if size is not None else "holds more"
    return (f"{brief(uri)} {found}, over the limit of {limit:,} bytes; use a smaller file, "
            f"or ask the operator to raise LIGHTTOUCH_MAX_DATA_BYTES")
