"""A certified lower bound on the optimum of a hinge-loss problem, from a point near it.

The hinge h(z) = max(0, 1 - z) lies above each of its pieces: h(z) >= 1 - z and h(z) >= 0.
At a reference point w_ref (the mixture's mean, projected), with margins z_i = y_i x_i . w_ref,
the examples within ``band`` of the kink, and at least the ``keep`` nearest to it, keep their
hinge; every other example is replaced by the piece it lies on, 1 - z below the kink and 0
above. That objective f_low is below f everywhere, so

    LB = min { f_low(w) : A w <= b, lower <= w <= upper }  <=  min over the same set of f,

an LP with d + k variables and m + k rows for k kept examples (their hinges as
xi_i >= 1 - z_i, xi_i >= 0), solved exactly by HiGHS's interior point. When w_ref is near
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
import scipy.sparse as sp
from scipy.optimize import linprog

from worker.problem.compiled import LOSS_HINGE, CompiledProblem

#: Examples within this distance of the hinge's kink (in margin) keep their hinge, and at
#: least this many of them (the nearest to the kink).
BAND = 0.01
KEEP = 4096
#: The LP's time limit: this share of the seconds the algorithm ran, and at least MIN_SECONDS,
#: so the bound adds at most a quarter to a long solve. (An ordering chain over d = 100,000
#: coordinates with 50,000 examples took 96 s; d = 1,000,000 was still running after 300 s.)
TIME_SHARE = 0.25
MIN_SECONDS = 10.0
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


def has_lower_bound(problem: CompiledProblem) -> bool:
    """Whether :func:`hinge_lower_bound` applies: a hinge loss held in memory, no l1, l2,
    quadratic part or rate constraints."""
    objective = problem.objective
    return (objective.kind == LOSS_HINGE and objective.l1 == 0 and objective.l2 == 0
            and problem.rates is None and problem.n > 0)


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
    if not has_lower_bound(problem):
        return None
    began = time.perf_counter()
    objective, constraints = problem.objective, problem.constraints
    signed = sp.csr_matrix(objective.features.multiply(objective.labels[:, None]))
    margins = signed @ reference
    n = signed.shape[0]
    distance = np.abs(margins - 1.0)
    count = max(int(np.count_nonzero(distance <= band)), min(n, keep))
    kept = np.sort(np.argsort(distance, kind="stable")[:count])
    below = margins < 1.0
    below[kept] = False
    # f_low(w) = (1/n) [ |below| - sum_{below} y_i x_i . w + sum_{kept} xi_i ]
    cost = np.concatenate([-(signed.T @ below.astype(np.float64)), np.ones(kept.size)]) / n
    hinges = sp.hstack([-signed[kept], -sp.identity(kept.size)])   # -z_i - xi_i <= -1
    rows = sp.vstack([sp.hstack([constraints.matrix, sp.csr_matrix((constraints.m, kept.size))]),
                      hinges], format="csr")
    right = np.concatenate([constraints.rhs, -np.ones(kept.size)])
    bounds = np.column_stack([np.concatenate([problem.lower, np.zeros(kept.size)]),
                              np.concatenate([problem.upper, np.full(kept.size, np.inf)])])
    solved = linprog(cost, A_ub=rows, b_ub=right, bounds=bounds, method="highs-ipm",
                     options={"time_limit": time_limit})
    status = STATUS.get(solved.status, solved.message)
    value = float(solved.fun + np.count_nonzero(below) / n) if solved.status == 0 else None
    return LowerBound(status=status, value=value, band_examples=int(kept.size),
                      seconds=time.perf_counter() - began)


def lower_bound_stats(problem: CompiledProblem, point: np.ndarray, objective: float,
                      solve_seconds: float) -> dict[str, float | int | str]:
    """The Result's ``stats`` for a feasible ``point`` (d,) of value ``objective``:
    ``lower_bound_status``, ``lower_bound_examples``, ``lower_bound_s`` and, when the LP was
    solved, ``lower_bound``, ``gap`` (objective - lower_bound, >= 0 up to the LP's tolerance)
    and ``relative_gap`` (gap / |lower_bound|, when it is not 0); empty when the bound does
    not apply. The LP may take :data:`TIME_SHARE` of the algorithm's ``solve_seconds``, at
    least :data:`MIN_SECONDS`."""
    bound = hinge_lower_bound(problem, point,
                              time_limit=max(MIN_SECONDS, TIME_SHARE * solve_seconds))
    if bound is None:
        return {}
    stats = {"lower_bound_status": bound.status, "lower_bound_examples": bound.band_examples,
             "lower_bound_s": bound.seconds}
    if bound.value is not None:
        stats.update(lower_bound=bound.value, gap=objective - bound.value)
        if bound.value != 0:
            stats["relative_gap"] = stats["gap"] / abs(bound.value)
    return stats
