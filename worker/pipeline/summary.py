"""One summary for every problem: candidates → shrinking LP → mean → projection → bound →
Result (the flow of docs/architecture.md).

The problem's kind enters only through its :class:`Scoring`: the linear problems'
(:class:`worker.pipeline.scoring.LinearScoring`) and the networks'
(:class:`worker.pipeline.network.NetworkScoring`) score candidates and points, shrink, and
project in their own way; :func:`summarize` does the rest once for both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from worker.algorithms.options import Trajectory
from worker.candidates.best_single import best_single
from worker.candidates.deterministic import best_feasible
from worker.candidates.shrink import expected_violation
from worker.errors import SolverError
from worker.projection import Projection
from worker.result import Expected, Member, NetworkModel, Point, Projected, Result, Sizes
from worker.spec.solver import Output


@dataclass(frozen=True)
class CandidateScores:
    """Every candidate scored: objectives (C,), the constraint columns (C, k) the shrinking
    LP keeps <= 0 in expectation, each candidate's reported max violation (C,), and what the
    scoring adds to the stats."""

    objectives: np.ndarray
    violations: np.ndarray
    max_violations: np.ndarray
    stats: dict = field(default_factory=dict)


class Scoring(Protocol):
    """What :func:`summarize` asks of a problem kind."""

    sizes: Sizes
    model: NetworkModel | None
    notes: list[str]

    def score(self, solutions: np.ndarray) -> CandidateScores:
        """Score candidates of shape (C, P)."""

    def shrink(self, scores: CandidateScores) -> np.ndarray:
        """Mixture weights (C,) of at most m + 1 members (the shrinking LP)."""

    def expected_objective(self, weights: np.ndarray, scores: CandidateScores) -> float:
        """The objective of the mixture ``weights`` (C,) in expectation."""

    def point(self, solution: np.ndarray) -> tuple[float, float]:
        """(objective, max violation) of one point (P,)."""

    def project(self, mean: np.ndarray) -> Projection | None:
        """The mean's projection, or None when it has none (rate constraints)."""

    def projection_stats(self, projection: Projection, objective: float,
                         solve_s: float) -> dict:
        """Stats of the projection (and what follows from it, e.g. a lower bound)."""


def summarize(scoring: Scoring, trajectory: Trajectory, output: Output,
              tolerance: float = 1e-3) -> Result:
    """Shrink the candidates to a mixture, average it, project the mean; report the
    algorithm's own mixture (``trajectory.baseline``) as ``baseline_*`` stats, if
    ``output.single`` the best single candidate (Cotter et al. 2019, §6.2 heuristic), and
    the deterministic model (:func:`best_feasible` within ``tolerance``, with its solution)."""
    candidates = trajectory.candidates
    if not candidates.solutions:
        raise SolverError.diverged()
    solutions = np.array(candidates.solutions)
    began = time.perf_counter()
    scores = scoring.score(solutions)
    if not np.isfinite(scores.objectives).all():
        raise SolverError.diverged()
    weights = scoring.shrink(scores)
    stats = dict(trajectory.stats, lp_s=time.perf_counter() - began,
                 candidates=len(candidates.solutions), **scores.stats)

    def member(c: int, weight: float) -> Member:
        return Member(weight=weight, iteration=candidates.iterations[c],
                      kind=candidates.kinds[c], objective=float(scores.objectives[c]),
                      max_violation=float(scores.max_violations[c]),
                      solution=solutions[c].tolist() if output.mixture else None)

    if trajectory.baseline is not None:
        stats.update(baseline_objective=scoring.expected_objective(trajectory.baseline, scores),
                     baseline_max_violation=expected_violation(trajectory.baseline,
                                                               scores.violations),
                     baseline_support=int(np.count_nonzero(trajectory.baseline)))
    mean_solution = weights @ solutions
    objective, violation = scoring.point(mean_solution)
    projected = _projected(scoring, mean_solution, stats) if output.project else None
    chosen = best_feasible(scores.objectives, scores.max_violations, tolerance)
    return Result(
        algorithm=trajectory.algorithm, sizes=scoring.sizes,
        mixture=[member(c, float(weights[c])) for c in np.flatnonzero(weights)],
        expected=Expected(objective=scoring.expected_objective(weights, scores),
                          max_violation=expected_violation(weights, scores.violations)),
        mean=Point(solution=mean_solution.tolist(), objective=objective,
                   max_violation=violation),
        projected=projected,
        single=member(best_single(scores.objectives, scores.violations), 1.0)
        if output.single else None,
        deterministic=member(chosen, 1.0).model_copy(
            update={"solution": solutions[chosen].tolist()}),
        model=scoring.model, stats=stats, notes=list(scoring.notes))


def _projected(scoring: Scoring, mean: np.ndarray, stats: dict) -> Projected | None:
    """The mean's projection with its objective and violation; its stats go to ``stats``."""
    projection = scoring.project(mean)
    if projection is None:
        return None
    objective, violation = scoring.point(projection.solution)
    stats.update(scoring.projection_stats(projection, objective, stats.get("solve_s", 0.0)))
    return Projected(solution=projection.solution.tolist(), objective=objective,
                     max_violation=violation, method=projection.method,
                     status=projection.status)
