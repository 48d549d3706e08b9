"""A certified lower bound on the optimum of a hinge-loss problem, from a point near it.

At a reference point w_ref (the answer), with margins z_i = y_i x_i . w_ref, the examples
within ``band`` of the kink, and at least the ``keep`` nearest to it, keep their hinge; every
other example is replaced by the piece it lies on (:mod:`worker.candidates.hinge_lp`). That
objective f_low is below f everywhere, so

    LB = min { f_low(w) : A w <= b, lower <= w <= upper }  <=  min over the same set of f,

an LP with d + k variables and m + k rows for k kept examples, solved by HiGHS's interior
point to its tolerances (without crossover, which took most of the LP's time at 6.1M pairs
and does not change the value). When w_ref is near the optimum, the examples away from the
kink lie on the same piece at the optimum and LB is close to it; more kept examples give a
tighter bound in a larger LP (measured on the LightTouch paper's lattice problem:
docs/guarantees.md#certified-lower-bound).

Only plain hinge objectives (``pairwise_hinge`` compiles to one) without l1, l2 or rate
constraints and with their examples in memory have this LP; :func:`hinge_lower_bound`
returns None for the others. An infinite box can make the LP unbounded, and a time limit
keeps it within a share of the job's budget: the status says so and no bound is reported.
From :data:`PDLP_ROWS` constraint rows on an order, no LP is solved: the dual certificate is
raised by supergradient ascent on the example weights instead
(:func:`ascent_lower_bound`, :mod:`worker.candidates.dual_ascent`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from worker.candidates.dual_ascent import ascended_bound
from worker.candidates.dual_certificate import (
    alpha_of_duals,
    dual_value,
    margin_weights,
    ordering_multipliers,
)
from worker.candidates.hinge_lp import (
    SignedRows,
    has_hinge_lp,
    lp_duals,
    piecewise_lp,
    signed_rows,
)
from worker.problem.compiled import CompiledProblem
from worker.stats import Stats, stat

#: Examples within this distance of the hinge's kink (in margin) keep their hinge, and at
#: least this many of them (the nearest to the kink).
BAND = 0.01
KEEP = 4096
#: While the bound leaves the answer more than TARGET (relative) from it and the time allows,
#: the band doubles, at most WIDENINGS times: the examples that change piece between the
#: answer and the optimum lie within a margin distance that does not shrink with n, so at a
#: few times the paper's pairs BAND no longer holds them (measured:
#: docs/guarantees.md#certified-lower-bound). TARGET is the 1% a default job's answer is
#: certified within: wider LPs cost minutes near the optimum.
TARGET = 1e-2
WIDENINGS = 2
#: The LP's time limit: this share of the seconds the algorithm ran, at least MIN_SECONDS and
#: at most MAX_SECONDS, so the bound adds at most a quarter to a long solve and a job still
#: ends within the minute a work horse is given after its time limit. (A long ordering chain
#: needs more than MAX_SECONDS, and its job ends without a bound: measured,
#: docs/guarantees.md#certified-lower-bound.)
TIME_SHARE = 0.25
#: From this many constraint rows on, the band LP is solved by PDLP (:func:`solver_for`;
#: measured: docs/guarantees.md#the-bound-at-a-million-constraints).
PDLP_ROWS = 100_000
MIN_SECONDS = 10.0
MAX_SECONDS = 30.0


@dataclass(frozen=True)
class LowerBound:
    """The LP's outcome: ``status`` (``"optimal"``, ``"time_limit"``, or HiGHS's model status
    in lower case, e.g. ``"unbounded"``), the bound
    when ``status == "optimal"`` (else None), the examples kept as hinges, the seconds, and
    for the ascent why it stopped (:class:`~worker.candidates.dual_ascent.Ascended`)."""

    status: str
    value: float | None
    band_examples: int
    seconds: float
    stopped: str | None = None


def hinge_lower_bound(problem: CompiledProblem, reference: np.ndarray, band: float = BAND,
                      keep: int = KEEP, time_limit: float = math.inf,
                      solver: str = "ipm", rows: SignedRows | None = None
                      ) -> LowerBound | None:
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
        Seconds HiGHS may take; past them the interior point's status is ``"time_limit"``
        and no bound, PDLP's last multipliers still give one.
    solver : str
        HiGHS's ``"ipm"`` or ``"pdlp"`` for the LP (:func:`solver_for` picks by size).
    rows : SignedRows, optional
        The rows y_i x_i when the problem holds none (examples left in partitions: any
        object with the same methods, e.g.
        :class:`worker.distributed.band_rows.PartitionedRows`).
    """
    if not has_hinge_lp(problem, rows):
        return None
    began = time.perf_counter()
    signed = signed_rows(problem) if rows is None else rows
    margins = signed.margins(reference)
    distance = np.abs(margins - 1.0)
    count = max(int(np.count_nonzero(distance <= band)), min(distance.size, keep))
    kept = np.sort(np.argsort(distance, kind="stable")[:count])
    lp = piecewise_lp(problem, signed, margins, kept, problem.lower, problem.upper)
    point, duals, status = lp_duals(lp, time_limit, solver)
    value = None
    if duals is not None and (status == "optimal" or solver == "pdlp"):
        value = certified_value(problem, signed, margins, kept, duals)
    if value is None and point is not None:    # an infinite side of the box: the LP's value
        value = float(lp.cost @ point + lp.constant)
    status = "optimal" if value is not None else status
    return LowerBound(status=status, value=value, band_examples=int(kept.size),
                      seconds=time.perf_counter() - began)


def certified_value(problem: CompiledProblem, signed, margins: np.ndarray,
                    kept: np.ndarray, duals: np.ndarray) -> float | None:
    """The dual bound (:func:`~worker.candidates.dual_certificate.dual_value`) of the band
    LP's row multipliers ``duals``: the kept examples' weights from their rows, the others'
    from the reference's ``margins``, and the better of the LP's own constraint multipliers
    and those refitted to the weights on an order; None when it is not finite (a side of the
    box is infinite)."""
    m, n = problem.m, signed.shape[0]
    alpha = margin_weights(margins)
    alpha[kept] = alpha_of_duals(duals[m:] * n, signed.weights[kept])
    values = [dual_value(problem, signed, alpha, duals[:m])]
    refit = ordering_multipliers(problem, signed, alpha)
    if refit is not None:
        values.append(dual_value(problem, signed, alpha, refit))
    best = max(values)
    return best if np.isfinite(best) else None


def widened_lower_bound(problem: CompiledProblem, reference: np.ndarray, objective: float,
                        time_limit: float, target: float = TARGET,
                        rows: SignedRows | None = None,
                        alpha: np.ndarray | None = None) -> LowerBound | None:
    """The best of :func:`hinge_lower_bound` with the band :data:`BAND`, then twice, four
    times ... as wide (at most :data:`WIDENINGS` times), until the answer of value
    ``objective`` is within ``target`` of it (relative), a wider LP runs out of the
    ``time_limit`` seconds they share, or it does not apply (None). Every bound is valid, so
    the largest is kept; ``seconds`` counts every LP. PDLP (:func:`solver_for`) always ends
    with a bound, so with it each LP may take an even share of what is left. From
    :data:`PDLP_ROWS` rows on an order, the bound is :func:`ascent_lower_bound` instead, which
    bounded tighter in less time than PDLP's band LPs, from the example weights ``alpha``
    (n,) when given (the primal-dual method's, whose bound is then the ascent's first)."""
    began = time.perf_counter()
    best, band, solver = None, BAND, solver_for(problem)
    ascended = ascent_lower_bound(problem, reference, time_limit, rows, alpha) \
        if solver == "pdlp" else None
    if ascended is not None:
        return ascended
    for left in range(1 + WIDENINGS, 0, -1):
        seconds = time_limit - (time.perf_counter() - began)
        bound = hinge_lower_bound(problem, reference, band, KEEP,
                                  seconds / left if solver == "pdlp" else seconds, solver,
                                  rows)
        if bound is None:
            return None
        if best is None or best.value is None or (
                bound.value is not None and bound.value > best.value):
            best = bound
        if bound.value is None or objective - bound.value <= target * abs(bound.value):
            break
        band *= 2
    fallback = margins_bound(problem, reference, rows) if best.value is None else None
    if fallback is not None:
        best = replace(best, value=fallback, status="margins")
    return replace(best, seconds=time.perf_counter() - began)


def margins_bound(problem: CompiledProblem, reference: np.ndarray,
                  rows: SignedRows | None = None) -> float | None:
    """The dual certificate without an LP: example weights from the ``reference``'s margins
    (:func:`~worker.candidates.dual_certificate.margin_weights`) and, on an order, the
    constraint multipliers refitted to them; None when there is no order to refit on or the
    box is infinite. Looser than an LP's multipliers, but one pass and one maximum
    flow: the bound of a job whose band LP ran out of time. ``rows``: as
    :func:`hinge_lower_bound`'s."""
    signed = signed_rows(problem) if rows is None else rows
    alpha = margin_weights(signed.margins(reference))
    lam = ordering_multipliers(problem, signed, alpha)
    if lam is None:
        return None
    value = dual_value(problem, signed, alpha, lam)
    return value if np.isfinite(value) else None


def ascent_lower_bound(problem: CompiledProblem, reference: np.ndarray, time_limit: float,
                       rows: SignedRows | None = None,
                       alpha: np.ndarray | None = None) -> LowerBound | None:
    """The dual certificate raised by supergradient steps on the example weights ``alpha``
    (n,), or those of the ``reference``'s margins
    (:func:`~worker.candidates.dual_ascent.ascended_bound`) for ``time_limit`` seconds or
    until it is flat, with status ``"ascent"``; None when the constraints are no order with
    a box constant on its pieces, or the box is infinite. ``rows``: as
    :func:`hinge_lower_bound`'s."""
    began = time.perf_counter()
    signed = signed_rows(problem) if rows is None else rows
    if alpha is None:
        alpha = margin_weights(signed.margins(reference))
    ascended = ascended_bound(problem, signed, alpha, time_limit)
    if ascended.value is None:
        return None
    return LowerBound(status="ascent", value=ascended.value, band_examples=0,
                      seconds=time.perf_counter() - began, stopped=ascended.stopped)


def takes_spare_time(problem: CompiledProblem) -> bool:
    """Whether the bound gets better with every second it is given: from :data:`PDLP_ROWS`
    rows (the ascent, or PDLP's band LPs), where the interior point's band LP below them
    ends on its own within seconds. The polish hands such a bound its time once its rounds
    are slow (:data:`worker.candidates.polish.SLOW_RATE`)."""
    return solver_for(problem) == "pdlp"


def solver_for(problem: CompiledProblem) -> str:
    """HiGHS's interior point (``"ipm"``) for the band LP below :data:`PDLP_ROWS` constraint
    rows, its first-order PDLP (``"pdlp"``) from there: the interior point's factorizations
    do not finish within the bound's time at a million lattice edges, and a PDLP stopped by
    its time limit still leaves multipliers, hence a certified bound."""
    return "pdlp" if problem.m >= PDLP_ROWS else "ipm"


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
    (gap / |lower_bound|, when it is not 0), and for the ascent why it stopped
    (``lower_bound_stopped``: ``"time_limit"``, ``"steps"`` or ``"flat"``)."""

    status: str = stat("lower_bound_status")
    examples: int = stat("lower_bound_examples")
    seconds: float = stat("lower_bound_s")
    lower_bound: float | None = None
    gap: float | None = None
    relative_gap: float | None = None
    stopped: str | None = stat("lower_bound_stopped")


def lower_bound_stats(problem: CompiledProblem, point: np.ndarray, objective: float,
                      solve_seconds: float, spare_seconds: float = 0.0,
                      rows: SignedRows | None = None,
                      alpha: np.ndarray | None = None) -> LowerBoundStats | None:
    """The bound's record for a feasible ``point`` (d,) of value ``objective``; None when
    the bound does not apply. The LPs (:func:`widened_lower_bound`) may take
    :func:`bound_seconds`; ``rows`` and ``alpha`` as :func:`widened_lower_bound`'s."""
    bound = widened_lower_bound(problem, point, objective,
                                bound_seconds(solve_seconds, spare_seconds), rows=rows,
                                alpha=alpha)
    if bound is None:
        return None
    if bound.value is None:
        return LowerBoundStats(bound.status, bound.band_examples, bound.seconds)
    gap = objective - bound.value
    return LowerBoundStats(bound.status, bound.band_examples, bound.seconds, bound.value, gap,
                           gap / abs(bound.value) if bound.value != 0 else None,
                           bound.stopped)
