"""When a stage of the job's time split stops: once what it still delivers per second is
too little, it hands the time left to the next stage.

A stage records its progress as (seconds, value) points, the value the best so far (the
polish's objective after each round, falling; the dual ascent's bound at each refit of its
multipliers, rising). Its gain rate over the last ``window`` intervals is

    |v_k - v_(k-window)| / |v_k| / (t_k - t_(k-window)),

the relative change of the value per second; the polish is slow once that falls below
:data:`worker.candidates.polish.SLOW_RATE`, the dual ascent flat once that rate over the time
left promises less than :data:`worker.candidates.dual_ascent.FLAT_GAIN`. Both stages keep the
best value so far, so the change is always an improvement; a value of 0 is judged against
:data:`TINY` instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: The smallest |value| a change is measured against.
TINY = 1e-12


def gain_rate(points: Sequence[tuple[float, float]], window: int = 1) -> float:
    """The relative change per second of the last ``window`` intervals of ``points``
    ((seconds, value) in order of time); infinite until there are ``window + 1`` points or
    when no time passed over them."""
    if len(points) < window + 1:
        return math.inf
    (began, first), (ended, last) = points[-1 - window], points[-1]
    if ended <= began:
        return math.inf
    return abs(last - first) / max(abs(last), TINY) / (ended - began)


def is_slow(points: Sequence[tuple[float, float]], threshold: float, window: int = 1) -> bool:
    """Whether the :func:`gain_rate` of ``points`` over ``window`` intervals is below
    ``threshold`` (relative change per second)."""
    return gain_rate(points, window) < threshold
