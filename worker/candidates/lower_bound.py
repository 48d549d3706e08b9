"""A certified lower bound on the optimum of a hinge-loss problem, from a point near it.

At a reference point w_ref (the answer), with margins z_i = y_i x_i . w_ref, the examples
within ``band`` of the kink, and at least the ``keep`` nearest to it, keep their hinge; every
other example is replaced by the piece it lies on (:mod:`worker.candidates.hinge_lp`). That
objective f_low is below f everywhere, so

    LB = min { f_low(w) : A w <= b, lower <= w <= upper }  <=  min over the same set of f,

an LP with d + k variables and m + k rows for k kept examples, solved exactly by HiGHS's
interior point (with crossover). When w_ref is near
the optimum, the examples away from the kink lie on the same piece at the optimum and LB is
close to it: with the LightTouch paper's lattice problem (d = 4,096, m = 24,576,
n = 612,587) and the projected mean of a 60-second run (+0.24% above the exact optimum),
keeping no example gave LB 1.07% below the optimum in 1.8 s, the 2,801 within 0.01 of the
kink 0.23% below in 8 s, the 8,340 within 0.03 0.038% below in 15-20 s (README "Certified
lower bound").

Only plain hinge objectives (``pairwise_hinge`` compiles to one) without l1, l2 or rate
constraints and with their examples in memory have this LP; :func:`hinge_lower_bound`
returns None for the others. An infinite box can make the LP unbounded, and a time limit
keeps it within a share of the job's budget: the status says so and no bound is reported.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from worker.candidates.hinge_lp import has_hinge_lp, piecewise_lp, signed_rows
from worker.problem.compiled import CompiledProblem
from worker.stats import Stats, stat

#: Examples within this distance of the hinge's kink (in margin) keep their hinge, and at
#: least this many of them (the nearest to the kink).
BAND = 0.01
KEEP = 4096
#: The LP's time limit: this share of the seconds the algorithm ran, at least MIN_SECONDS and
#: at most MAX_SECONDS, so the bound adds at most a quarter to a long solve and a job still
#: ends within the minute a work horse is given after its time limit. (An ordering chain over
#: d = 100,000 coordinates with 50,000 examples took 96 s; d = 1,000,000 was still running
#: after 300 s.)
TIME_SHARE = 0.25
MIN_SECONDS = 10.0
MAX_SECONDS = 30.0
#: scipy's linprog status codes -> ``stats.lower_bound_status``.
STATUS = {0: "optimal", 1: "time_limit", 2: "infeasible", 3: "unbounded"}


@dataclass(frozen=True)
class LowerBound:
    """The LP's outcome: ``status`` (a :data:`STATUS` value, or HiGHS's message), the bound
    when ``status == "optimal"`` (else None), the examples kept as hinges, the seconds."""

    status: str
    value: float | None
    band_examples: int
    seconds: float


def hinge_lower_bound(problem: CompiledProblem, reference: np.ndarray, band: float = BAND,
                      keep: int = KEEP, time_limit: float = math.inf) -> LowerBound | None:
    """LB <= the problem's optimum (module docstring), or None when it does not apply.

    Parameters
    ----------
    problem : CompiledProblem
        Hinge loss on ``objective.features`` (n, d) with labels (n,), constraints A (m, d)
        with right-hand sides b (m,), box ``lower``/``upper`` (d,).
    reference : ndarray, shape (d,)
        The point whose margins decide each example's piece; any point gives a valid bound,
        one near the optimum a close one.
    band : float
        Examples with |margin - 1| <= band keep their hinge ...
    keep : int
        ... and at least the ``keep`` examples nearest the kink do (all of them when n <=
        keep: the bound is then the optimum itself).
    time_limit : float
        Seconds HiGHS may take; past them the status is ``"time_limit"`` and no bound.
    """
    if not has_hinge_lp(problem):
        return None
    began = time.perf_counter()
    signed = signed_rows(problem)
    margins = signed @ reference
    distance = np.abs(margins - 1.0)
    count = max(int(np.count_nonzero(distance <= band)), min(distance.size, keep))
    kept = np.sort(np.argsort(distance, kind="stable")[:count])
    lp = piecewise_lp(problem, signed, margins, kept, problem.lower, problem.upper)
    solved = linprog(lp.cost, A_ub=lp.rows, b_ub=lp.right,
                     bounds=np.column_stack([lp.lower, lp.upper]), method="highs-ipm",
                     options={"time_limit": time_limit})
    status = STATUS.get(solved.status, solved.message)
    value = float(solved.fun + lp.constant) if solved.status == 0 else None
    return LowerBound(status=status, value=value, band_examples=int(kept.size),
                      seconds=time.perf_counter() - began)


def bound_seconds(solve_seconds: float, spare_seconds: float) -> float:
    """The LP's time limit: :data:`TIME_SHARE` of the algorithm's ``solve_seconds``, at least
    :data:`MIN_SECONDS` and at most :data:`MAX_SECONDS`, or the ``spare_seconds`` left of the
    job's time limit when they are more."""
    return max(min(MAX_SECONDS, max(MIN_SECONDS, TIME_SHARE * solve_seconds)), spare_seconds)


@dataclass(frozen=True)
class LowerBoundStats(Stats):
    """The lower bound's record (:mod:`worker.stats`): ``lower_bound_status``,
    ``lower_bound_examples``, ``lower_bound_s`` and, when the LP was solved, ``lower_bound``,
    ``gap`` (objective - lower_bound, >= 0 up to the LP's tolerance) and ``relative_gap``
    (gap / |lower_bound|, when it is not 0)."""

    status: str = stat("lower_bound_status")
    examples: int = stat("lower_bound_examples")
    seconds: float = stat("lower_bound_s")
    lower_bound: float | None = None
    gap: float | None = None
    relative_gap: float | None = None


def lower_bound_stats(problem: CompiledProblem, point: np.ndarray, objective: float,
                      solve_seconds: float, spare_seconds: float = 0.0
                      ) -> LowerBoundStats | None:
    """The bound's record for a feasible ``point`` (d,) of value ``objective``; None when
    the bound does not apply. The LP may take :func:`bound_seconds`."""
    bound = hinge_lower_bound(problem, point,
                              time_limit=bound_seconds(solve_seconds, spare_seconds))
    if bound is None:
        return None
    if bound.value is None:
        return LowerBoundStats(bound.status, bound.band_examples, bound.seconds)
    gap = objective - bound.value
    return LowerBoundStats(bound.status, bound.band_examples, bound.seconds, bound.value, gap,
                           gap / abs(bound.value) if bound.value != 0 else None)
