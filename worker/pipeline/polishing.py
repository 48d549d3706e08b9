"""``solver.polish``: sharing a job's time between the algorithm and the trust-region LP
polish of :mod:`worker.candidates.polish`, whose answer joins the shrinking LP's candidates;
at scale on an order, the primal-dual method of :mod:`worker.candidates.primal_dual`
instead, whose answer joins them the same way and whose bound is the job's certificate.

When the objective is a hinge-loss LP (held in memory, or read in partitions by
map-reduces: :mod:`worker.distributed.band_rows`), the algorithm may run for
:data:`ALGORITHM_SHARE` of ``solver.time_limit_s``, and ``iterations: "auto"`` stops it at
:data:`ALGORITHM_TOLERANCE` times ``solver.tolerance``; the polish then starts from the exact
projection of the algorithm's last running average and may run for :data:`POLISH_SHARE` of
the time left; where the lower bound gets better with every second it is given
(:func:`~worker.candidates.lower_bound.takes_spare_time`: the dual ascent from 100,000 order
rows), it stops earlier once a round is slow (:data:`~worker.candidates.polish.SLOW_RATE`),
and the bound, which may run until the job's time limit, gets the rest. Its point is added
as a ``"polished"`` candidate, so the shrinking LP (which picks it when it is the best
feasible one) and the projection treat it like any other.

Where the bound is the dual ascent's (an order with a box constant on its pieces, from
100,000 rows), the stage runs the primal-dual method instead, for the same share of the
time left (no ``slow`` rule: its first steps are its slowest): it lowered the answer further
than the LP rounds, and it raises the certificate
as it goes, so the ascent starts from its best example weights, at its bound (measured on
the 2^14 and 2^17 lattices:
docs/guarantees.md#the-primal-dual-method-the-answer-and-the-bound-together).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from worker.algorithms.run.loop import Progress, ProgressCallback
from worker.algorithms.run.options import SolverOptions
from worker.candidates.hinge_lp import SignedRows, has_hinge_lp, signed_rows
from worker.candidates.lower_bound import takes_spare_time
from worker.candidates.polish import SLOW_RATE, Polished, polish
from worker.candidates.primal_dual import primal_dual
from worker.candidates.snapshots import Candidates
from worker.problem.compiled import CompiledProblem
from worker.projection import project
from worker.stats import Stats, stat

#: The share of ``time_limit_s`` the algorithm may take before the polish.
ALGORITHM_SHARE = 0.5
#: The share of the time left after the algorithm the polish may take: the rest is the lower
#: bound's (:mod:`worker.candidates.lower_bound`), whose LP at 6.1M pairs needs minutes.
POLISH_SHARE = 0.75
#: ``iterations: "auto"`` stops the algorithm at this multiple of ``solver.tolerance``: the
#: polish takes the answer the rest of the way.
ALGORITHM_TOLERANCE = 10.0


def polishes(enabled: bool, problem: CompiledProblem, rows: SignedRows | None = None) -> bool:
    """Whether the job polishes: ``solver.polish`` on a hinge-loss LP held in memory or
    whose ``rows`` are read in partitions."""
    return enabled and has_hinge_lp(problem, rows)


def algorithm_options(options: SolverOptions) -> SolverOptions:
    """The algorithm's options when the polish follows: its share of the time limit and a
    looser tolerance."""
    return replace(options, time_limit_s=ALGORITHM_SHARE * options.time_limit_s,
                   tolerance=min(0.5, ALGORITHM_TOLERANCE * options.tolerance))


@dataclass(frozen=True)
class PolishStats(Stats):
    """The polish stage's record (:mod:`worker.stats`): its LPs' status, rounds, examples,
    and seconds (``polish_status``, ``polish_rounds``, ``polish_examples``, ``polish_s``),
    and its method (``polish_method``: ``"trust_region_lp"`` or ``"primal_dual"``, whose
    steps are the rounds and which keeps no example)."""

    method: str = stat("polish_method")
    status: str = stat("polish_status")
    rounds: int = stat("polish_rounds")
    examples: int = stat("polish_examples")
    seconds: float = stat("polish_s")


def polished_candidates(problem: CompiledProblem, candidates: Candidates, solve_s: float,
                        deadline: float, tolerance: float,
                        progress: ProgressCallback | None = None,
                        rows: SignedRows | None = None
                        ) -> tuple[Candidates, PolishStats | None, float | None]:
    """Polish the projection of the last running average (the last candidate if none is
    an average) for :data:`POLISH_SHARE` of the time left until ``deadline`` (a
    ``time.perf_counter()`` value), or until ``tolerance``, or (when the bound takes the
    time left) until a round is slow; at scale on an order, by the primal-dual method for
    as long, or until certified within ``tolerance``.

    Returns the candidates with the point added as a ``"polished"`` one when it is better
    (a new set; ``candidates`` is left as it is), the stage's stats (None without
    candidates) and the example weights (n,) of the primal-dual method's best bound, for the
    lower bound's ascent to start from (None from the LP polish).
    ``progress`` hears of every round's point (every refit's, for the primal-dual method),
    at the algorithm's last iteration, ``solve_s`` seconds into the job's solving; ``rows``
    are the examples' rows read in partitions (None: the problem's own).
    """
    if not candidates.solutions:
        return candidates, None, None
    last = max((k for k, kind in enumerate(candidates.kinds) if kind == "average"),
               default=len(candidates.kinds) - 1)
    began = time.perf_counter()
    start = project(candidates.solutions[last], problem.constraints, problem.lower,
                    problem.upper).solution
    iteration = candidates.iterations[-1]

    def report(w: np.ndarray, value: float) -> None:
        violation = float(problem.constraints.values(w).max(initial=0.0))
        progress(Progress(iteration=iteration, iterations=iteration, objective=value,
                          max_violation=violation, constraint_checks=candidates.checks[-1],
                          elapsed_s=solve_s + time.perf_counter() - began))

    heard = None if progress is None else report
    until = began + POLISH_SHARE * (deadline - began)
    found = primal_dual(
        problem, signed_rows(problem) if rows is None else rows, start, until, tolerance,
        after_refit=None if heard is None else (lambda w, value, _: heard(w, value))
    ) if takes_spare_time(problem) else None
    if found is not None:
        polished = Polished(found.point, found.objective, found.start_objective, found.stopped,
                            found.steps, 0, found.seconds)
    else:
        polished = polish(problem, start, until, tolerance, after_round=heard,
                          slow_rate=SLOW_RATE if takes_spare_time(problem) else 0.0, rows=rows)
    stats = PolishStats("trust_region_lp" if found is None else "primal_dual", polished.status,
                        polished.rounds, polished.examples, time.perf_counter() - began)
    if polished.objective < polished.start_objective:
        candidates = candidates.last(len(candidates.solutions))
        candidates.add(polished.solution, candidates.iterations[-1], "polished",
                       candidates.checks[-1] + polished.rounds * problem.m,
                       candidates.seconds[-1] + stats.seconds)
    return candidates, stats, None if found is None else found.alpha
