"""LightTouch's constraint groups: how many, and whether the p-update is lazy (paper §5.1)."""

from __future__ import annotations

import math

AGGREGATE_ABOVE_M = 1024


def lazy_update(m: int, p_update: str) -> bool:
    """Whether the p-update is lazy (see the module docstring for ``auto``)."""
    return p_update == "lazy" or (p_update == "auto" and m <= AGGREGATE_ABOVE_M)


def group_count(m: int, aggregate: int | None, lazy: bool) -> int:
    """Number of constraint groups G (paper §5.1)."""
    if aggregate is not None:
        return max(1, min(aggregate, m)) if m else 0
    if lazy or m <= AGGREGATE_ABOVE_M:
        return m
    return max(1, round(math.sqrt(m)))
