"""Raising the dual certificate by supergradient ascent on the example weights.

For fixed example weights alpha the best constraint multipliers on an order are one maximum
flow (:func:`worker.candidates.dual_certificate.ordering_multipliers`), so the certificate
is a concave function of alpha alone,

    phi(alpha) = (1/n) sum_i alpha_i + min { -(1/n) sum_i alpha_i z_i(w) : w in C },

C the order's cone within the box, and a supergradient at alpha is (1/n)(1 - z_i(w_alpha))
at the inner minimizer w_alpha: lower or upper on each coordinate, by the sign of the
refitted reduced cost c (:func:`~worker.candidates.dual_certificate.dual_value`). Projected
supergradient steps alpha <- clip(alpha + t_k (1 - z(w_alpha)) / (upper - lower)) with
t_k = 2 STEP / sqrt(k) raise phi from the answer's margin weights, which leave a large
imbalance when the answer is far from the optimum; on the lattice they rose far above the
band LP's PDLP multipliers in less time (measured:
docs/guarantees.md#the-bound-at-a-million-constraints). A flow costs far more than a step
(two passes over the rows), and between refits the steps keep
the last multipliers, which bounds all the same (weak duality holds for any lam >= 0), so
the multipliers are refitted only every :data:`REFIT_EVERY` steps. Every step's value is a
valid bound; the largest is kept.

The ascent runs until its time is up (``"time_limit"``; a refit that would end past it is
not started: at a million rows one is a large share of a job's time), its steps are done
(``"steps"``), or its best bound, rising for the rest of its time at the relative rate of
the last half of its refits (at least :data:`FLAT_REFITS`; :mod:`worker.candidates.gain_rate`),
would rise by less than :data:`FLAT_GAIN` of itself (``"flat"``): the job then ends early
instead of spending its last seconds on a bound that barely moves. The ascent is the job's
last stage, so the time it leaves goes to no other: it is judged by what the whole time left
would bring, not by its rate alone (a rate of 1e-4 per second stopped a 2^14 job's ascent
after 15 s with 270 s left). The best bound rises in steps, with plateaus of up to a
dozen refits between them, so a window of a fixed few refits reads a plateau as the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from worker.candidates.dual_certificate import ordering_multipliers, reduced_cost, value_of_cost
from worker.candidates.gain_rate import gain_rate
from worker.candidates.hinge_lp import SignedRows
from worker.candidates.order_box import OrderBox
from worker.problem.compiled import CompiledProblem

#: The first step (then STEP / sqrt(k)), in units of the box's half-width: of 0.05, 0.1, 0.3,
#: 1 and 3, 0.3 rose fastest (measured: docs/guarantees.md#the-bound-at-a-million-constraints).
STEP = 0.3
#: The multipliers are refitted (one maximum flow) every REFIT_EVERY steps; the steps between
#: keep them (every (alpha, lam) is a bound) and cost two passes over the rows each; every 20
#: rose faster than every 5 or every step (measured:
#: docs/guarantees.md#the-bound-at-a-million-constraints).
REFIT_EVERY = 20
#: The ascent is flat once the rest of its time, at the relative rate of the last half of its
#: refits (and at least the last FLAT_REFITS), would raise its best bound by less than
#: FLAT_GAIN of itself: a tenth of the 1% a certificate aims at (measured at the 2^14
#: lattice: docs/guarantees.md#the-time-split-each-stage-until-it-slows).
FLAT_GAIN = 1e-3
FLAT_REFITS = 3


@dataclass(frozen=True)
class Ascended:
    """The ascent's outcome: its best bound (None when the order's refit does not apply or
    no value was finite), why it stopped (``"time_limit"``, ``"steps"`` or ``"flat"``) and
    the refits it made."""

    value: float | None
    stopped: str
    refits: int


def ascended_bound(problem: CompiledProblem, signed: SignedRows, alpha: np.ndarray,
                   seconds: float, steps: int = 1000, flat_gain: float = FLAT_GAIN
                   ) -> Ascended:
    """The largest certificate phi (module docstring) over supergradient steps from
    ``alpha``, within ``seconds`` (at least one step) and at most ``steps``, until flat.

    Parameters
    ----------
    problem : CompiledProblem
        A hinge-loss LP on an :class:`~worker.candidates.order_box.OrderBox` (else None).
    signed : SignedRows, shape (n, d)
        Its rows y_i x_i.
    alpha : ndarray, shape (n,)
        The starting example weights in [0, 1].
    seconds : float
        The time the steps may take (each two passes over the rows, and a maximum flow
        every :data:`REFIT_EVERY`).
    steps : int
        The most steps taken.
    flat_gain : float
        The least relative rise the time left must promise at the rate of the last half of
        the refits (0: never flat).

    Returns
    -------
    Ascended
        The best bound (<= the optimum), why the ascent stopped and its refits.
    """
    began, best, lam = time.perf_counter(), -np.inf, None
    order = OrderBox.of(problem)
    if order is None:
        return Ascended(None, "steps", 0)
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    half_width = (problem.upper - problem.lower).max() / 2
    risen: list[tuple[float, float]] = []          # (seconds, best) at each refit
    stopped, refit_s, refits = "steps", 0.0, 0
    for k in range(1, steps + 1):
        if (k - 1) % REFIT_EVERY == 0:
            elapsed = time.perf_counter() - began
            if k > 1:
                risen.append((elapsed, best))
                rate = gain_rate(risen, max(FLAT_REFITS, len(risen) // 2))
                if rate * (seconds - elapsed) < flat_gain:
                    stopped = "flat"
                    break
                if elapsed + refit_s >= seconds:
                    stopped = "time_limit"
                    break
            lam = ordering_multipliers(problem, signed, alpha, order)
            refit_s, refits = time.perf_counter() - began - elapsed, refits + 1
        cost = reduced_cost(problem, signed, alpha, lam)
        best = max(best, value_of_cost(problem, signed, alpha, lam, cost))
        if time.perf_counter() - began >= seconds or not np.isfinite(half_width):
            stopped = "time_limit"
            break
        inner = np.where(cost > 0, problem.lower,
                         np.where(cost < 0, problem.upper, (problem.lower + problem.upper) / 2))
        slope = 1.0 - signed.margins(inner)   # n / c_i times the supergradient: its metric
        alpha = np.clip(alpha + STEP / np.sqrt(k) * slope / half_width, 0.0, 1.0)
    return Ascended(float(best) if np.isfinite(best) else None, stopped, refits)
