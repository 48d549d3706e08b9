"""Polishing a feasible answer of a hinge-loss LP towards its exact optimum with trust-region
LPs.

Around a feasible w_k, in the trust region B_k = {w : |w - w_k|_inf <= r} inside the box, a
margin z_i = y_i x_i . w moves by at most r |x_i|_1. Examples farther than that from the
kink stay on their piece throughout B_k, so the LP that keeps only the others' hinges
(:mod:`worker.candidates.hinge_lp`) equals f on B_k, and

    w_(k+1) = argmin { f(w) : A w <= b, w in B_k }

is one exact LP with far fewer rows than the whole problem's n: f(w_(k+1)) <= f(w_k), and
w_(k+1) is feasible. Of A's rows it keeps only those some point of B_k could violate: the
others hold on all of B_k, and near an answer with few tight rows they are nearly all of A
(measured: docs/guarantees.md#polishing-hinge-loss-lps). When no coordinate of w_(k+1) lies
on a side of the trust region that is inside the box, w_(k+1) minimizes f near itself, hence
(f is convex) everywhere: the status is ``"optimal"``.

Each round sets r from its center so that the LP keeps :data:`EXAMPLES` hinges besides those
on the kink (the EXAMPLES-th smallest |z_i - 1| / |x_i|_1 that is not 0); when no more
examples are off the kink, r is infinite and one LP gives the exact optimum. A fixed r let
the kept examples grow as margins gathered near the kink, and every LP with them; a count
keeps every LP small. But the same count lies nearer the kink as the pairs grow, and a step
that reaches a side of the trust region was held back by it: the count then doubles, up to
:data:`GROWTH` times the first (a fixed count's steady small steps read as convergence well
short of the tolerance at a few times the paper's pairs; measured:
docs/guarantees.md#polishing-hinge-loss-lps). Each LP is HiGHS's interior point without
crossover (a crossover once ran for minutes at the paper's size; the pipeline projects the
answer anyway).

Once the count stays, rounds shrink the excess over the optimum geometrically, so the
remaining excess is about Delta_k rho / (1 - rho), with Delta_k the last round's decrease and
rho the larger of the last two ratios of decreases at that count; the polish stops with
``"tolerance"`` when that is at most ``tolerance * f``, with ``"time_limit"`` at the deadline,
with ``"stalled"`` when a round does not lower f (the LP's own tolerances), and, given a
``slow_rate``, with ``"slow"`` when a round lowered f by less than that share of f per second
of the round (:mod:`worker.candidates.gain_rate`): the pipeline then hands the time left to
a lower bound that uses it (:data:`SLOW_RATE`). What it
takes on the LightTouch paper's lattice problem (d = 4,096, m = 24,576, n = 612,587) is
measured in docs/guarantees.md#polishing-hinge-loss-lps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from worker.candidates.gain_rate import is_slow
from worker.candidates.hinge_lp import (
    SignedRows,
    has_hinge_lp,
    may_bind,
    piecewise_lp,
    signed_rows,
    solve_lp,
)
from worker.problem.compiled import CompiledProblem

#: Hinges off the kink the first LP keeps (this sets the trust region's radius) ...
EXAMPLES = 4096
#: ... doubled after each round whose step reached a side of its trust region, up to this
#: many times as many.
GROWTH = 4
#: A coordinate within this share of r from a trust-region side lies on it.
ON_SIDE = 1e-4
#: The largest contraction rate the tolerance rule assumes.
MAX_RATE = 0.9
#: A round that lowers f by less than this share of f per second of the round is slow: the
#: certified gap f / bound - 1 narrows alike for a relative fall of f and a relative rise of
#: the bound, and at the 2^14 lattice the dual ascent raised its bound faster than this for
#: its first minute while every polish round was slower (measured:
#: docs/guarantees.md#the-time-split-each-stage-until-it-slows).
SLOW_RATE = 1e-3


@dataclass(frozen=True)
class Polished:
    """The polish's outcome: the last accepted point (d,), its objective and the start's,
    why it stopped (``"optimal"``, ``"tolerance"``, ``"time_limit"``, ``"stalled"``,
    ``"slow"`` or HiGHS's status), the LPs solved, the hinges the last one kept, the seconds."""

    solution: np.ndarray
    objective: float
    start_objective: float
    status: str
    rounds: int
    examples: int
    seconds: float


def hinge_objective(signed: SignedRows, w: np.ndarray) -> float:
    """(1/n) sum_i c_i max(0, 1 - y_i x_i . w) for ``signed`` (n, d), its weights c, and
    w (d,)."""
    return signed.mass(np.maximum(0.0, 1.0 - signed.margins(w))) / signed.shape[0]


def polish(problem: CompiledProblem, start: np.ndarray, deadline: float, tolerance: float,
           examples: int = EXAMPLES,
           after_round: Callable[[np.ndarray, float], None] | None = None,
           slow_rate: float = 0.0, rows: SignedRows | None = None) -> Polished | None:
    """Trust-region LP rounds from ``start`` (module docstring), or None when the objective
    is not a hinge-loss LP; ``slow_rate`` > 0 stops them once a round is slow.

    Parameters
    ----------
    problem : CompiledProblem
        Hinge loss on features (n, d), constraints A (m, d), b (m,), box (d,).
    start : ndarray, shape (d,)
        A feasible point (the pipeline projects one of the algorithm's candidates).
    deadline : float
        ``time.perf_counter()`` value after which no LP starts and a running one stops.
    tolerance : float
        Stop once the estimated remaining decrease is at most ``tolerance`` times f.
    examples : int
        Hinges off the kink the first LP keeps (:func:`trust_radius`), doubled by steps that
        reach the trust region's side, up to :data:`GROWTH` times as many.
    after_round : callable, optional
        Called with each accepted point (d,) and its objective (progress reports).
    slow_rate : float
        Stop (``"slow"``) after a round lowering f by less than this share of f a second.
    rows : SignedRows, optional
        The rows y_i x_i read elsewhere (:class:`~worker.distributed.band_rows.PartitionedRows`).
    """
    if not has_hinge_lp(problem, rows):
        return None
    began, signed = time.perf_counter(), signed_rows(problem) if rows is None else rows
    reach = signed.reach()                                          # |x_i|_1, (n,)
    w = np.clip(start, problem.lower, problem.upper)
    value = start_value = hinge_objective(signed, w)
    status, rounds, kept_count, decreases = "time_limit", 0, 0, []
    max_examples = GROWTH * examples
    while (round_began := time.perf_counter()) < deadline:
        solved, status, radius, kept_count = trust_region_lp(problem, signed, reach, w,
                                                             examples, deadline)
        rounds += 1
        if solved is None:
            break
        candidate = np.clip(solved[:w.size], problem.lower, problem.upper)
        candidate_value = hinge_objective(signed, candidate)
        if candidate_value > value:
            status = "stalled"
            break
        decreases.append(value - candidate_value)
        on_side = on_trust_side(candidate, w, radius, problem.lower, problem.upper)
        slow = is_slow([(round_began, value), (time.perf_counter(), candidate_value)],
                       slow_rate)
        w, value, growing = candidate, candidate_value, examples < max_examples
        if after_round is not None:
            after_round(w, value)
        status = stop_after_round(on_side, growing, decreases, tolerance * abs(value), slow)
        if status != "time_limit":
            break
        if growing:     # the radius held the step back: widen it, and measure anew
            examples, decreases = min(max_examples, 2 * examples), []
    return Polished(solution=w, objective=value, start_objective=start_value, status=status,
                    rounds=rounds, examples=kept_count, seconds=time.perf_counter() - began)


def stop_after_round(on_side: bool, growing: bool, decreases: list[float], excess: float,
                     slow: bool) -> str:
    """Why the polish stops after an accepted round: ``"optimal"`` when its step reached no
    side of the trust region, ``"tolerance"`` when the count of kept hinges stays (not
    ``growing``) and :func:`remaining_estimate` of the ``decreases`` is at most ``excess``,
    ``"slow"`` after a ``slow`` round; ``"time_limit"`` (go on until it) otherwise."""
    if not on_side:
        return "optimal"
    if not growing and remaining_estimate(decreases) <= excess:
        return "tolerance"
    return "slow" if slow else "time_limit"


def trust_region_lp(problem: CompiledProblem, signed: SignedRows, reach: np.ndarray,
                    w: np.ndarray, examples: int, deadline: float
                    ) -> tuple[np.ndarray | None, str, float, int]:
    """One round's LP around ``w`` (d,) keeping ``examples`` hinges off the kink (reaches
    (n,) of ``signed``) and the constraint rows some point of the trust region could violate
    (:func:`~worker.candidates.hinge_lp.may_bind`: near an answer with few tight rows, a few
    dozen of a lattice's million edges): its solution (d + kept,), w inside the trust region,
    or None, its status, the radius and the hinges it kept."""
    margins = signed.margins(w)
    radius = trust_radius(margins, reach, examples)
    kept = np.flatnonzero(may_cross(margins, reach, radius))
    lower = np.maximum(problem.lower, w - radius)
    upper = np.minimum(problem.upper, w + radius)
    binding = may_bind(problem.constraints.matrix, problem.constraints.rhs, lower, upper)
    lp = piecewise_lp(problem, signed, margins, kept, lower, upper, binding)
    solved, status = solve_lp(lp, deadline - time.perf_counter())
    if solved is not None:                  # the dropped rows hold on the trust region
        solved = np.concatenate([np.clip(solved[:w.size], lower, upper), solved[w.size:]])
    return solved, status, radius, int(kept.size)


def trust_radius(margins: np.ndarray, reach: np.ndarray, examples: int) -> float:
    """The radius at which ``examples`` of the examples (n,) off the kink may reach it (those
    on it are kept anyway); infinite when no more than that many have features (the others
    never move)."""
    moving = reach > 0
    slack = np.abs(margins[moving] - 1.0) / reach[moving]
    slack = slack[slack > 0]
    if slack.size <= examples:
        return np.inf
    return float(np.partition(slack, examples - 1)[examples - 1])


def may_cross(margins: np.ndarray, reach: np.ndarray, radius: float) -> np.ndarray:
    """Which examples (n,) can reach the kink within ``radius`` (all those with features
    when it is infinite)."""
    if not np.isfinite(radius):
        return reach > 0
    return np.abs(margins - 1.0) <= radius * reach


def on_trust_side(candidate: np.ndarray, center: np.ndarray, radius: float,
                  lower: np.ndarray, upper: np.ndarray) -> bool:
    """Whether a coordinate of ``candidate`` (d,) lies on a side of the trust region around
    ``center`` (d,) that is strictly inside the box."""
    if not np.isfinite(radius):
        return False
    near = ON_SIDE * radius
    low_side = (center - radius > lower) & (candidate <= center - radius + near)
    high_side = (center + radius < upper) & (candidate >= center + radius - near)
    return bool(np.any(low_side | high_side))


def remaining_estimate(decreases: list[float]) -> float:
    """The excess left after geometric rounds with these decreases: Delta rho / (1 - rho),
    rho the larger of the last two decreases' ratios (at most :data:`MAX_RATE`; one ratio
    after two rounds, one noisy round can make it look small); inf after one round."""
    if len(decreases) < 2:
        return np.inf
    pairs = list(zip(decreases[:-1], decreases[1:], strict=True))[-2:]
    ratios = [later / earlier if earlier > 0 else 0.0 for earlier, later in pairs]
    rate = min(MAX_RATE, max(ratios))
    return decreases[-1] * rate / (1.0 - rate)
