"""LightTouch's constraint groups: how many, and whether the p-update is lazy (paper §5.1).

``p_update: auto`` is lazy (one constraint per group) when m <= 1024 and dense with
``aggregate: auto`` = round(sqrt(m)) groups otherwise, balancing the O(G) p-update against
the m/G checks of a group. The lazy update costs O(#groups with mu > 0) per iteration;
on the paper's lattice (m = 24,576) thousands stay slightly violated, where aggregation
is faster (docs/benchmarks.md, ``bench/lattice_bench.py``).
"""

from __future__ import annotations

import math

AGGREGATE_ABOVE_M = 1024


def lazy_update(m: int, p_update: str) -> bool:
    """Whether the p-update is lazy (the module docstring's rule for ``auto``)."""
    return p_update == "lazy" or (p_update == "auto" and m <= AGGREGATE_ABOVE_M)


def group_count(m: int, aggregate: int | None, lazy: bool) -> int:
    """Number of constraint groups G (paper §5.1)."""
    if aggregate is not None:
        return max(1, min(aggregate, m)) if m else 0
    if lazy or m <= AGGREGATE_ABOVE_M:
        return m
    return max(1, round(math.sqrt(m)))
