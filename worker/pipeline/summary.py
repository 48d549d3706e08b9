"""One summary for every problem: candidates → shrinking LP → mean → projection → bound →
Result (the flow of docs/architecture.md).

The problem's kind enters only through its :class:`Scoring`: the linear problems'
(:class:`worker.pipeline.scoring.LinearScoring`) and the networks'
(:class:`worker.pipeline.network.NetworkScoring`) score candidates and points, shrink, and
project in their own way; :func:`summarize` does the rest once for both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from worker.candidates.best_single import best_single
from worker.candidates.deterministic import best_feasible
from worker.candidates.scores import CandidateScores
from worker.candidates.shrink import expected_violation
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import Trajectory
from worker.errors import SolverError
from worker.projection import Projection
from worker.result import (
    Expected,
    Feasibility,
    Member,
    NetworkModel,
    Point,
    Projected,
    Result,
    Resume,
    Sizes,
)
from worker.spec.solver import Output
from worker.stats import Stats, stat


@dataclass(frozen=True)
class BaselineStats(Stats):
    """The algorithm's own mixture of its candidates (``trajectory.baseline``) as scored
    here: its expected objective and violation, and how many candidates it weighs."""

    objective: float = stat("baseline_objective")
    max_violation: float = stat("baseline_max_violation")
    support: int = stat("baseline_support")


@dataclass(frozen=True)
class SummaryStats(Stats):
    """The summary stage's record (:mod:`worker.stats`): the shrinking LP's seconds, the
    candidates scored and the columns kept, the algorithm's own mixture (None without one)
    and the projection's record (None without a projection)."""

    lp_s: float
    candidates: int
    violated_columns: int | None
    baseline: BaselineStats | None
    projection: Stats | None


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
                         solve_s: float) -> Stats | None:
        """The projection's record (and what follows from it, e.g. a lower bound)."""


def summarize(scoring: Scoring, trajectory: Trajectory, output: Output,
              tolerance: float = 1e-3) -> tuple[Result, SummaryStats]:
    """Shrink the candidates to a mixture, average it, project the mean (when the mixture
    violates a constraint by more than ``tolerance`` and the projection does not, the
    projection joins the candidates and they are shrunk again: :func:`_rescued`); report the
    algorithm's own mixture (``trajectory.baseline``) as ``baseline_*`` stats, if
    ``output.single`` the best single candidate (Cotter et al. 2019, §6.2 heuristic), and
    the deterministic model (:func:`best_feasible` within ``tolerance``, with its solution).

    Returns the Result, whose ``stats`` the caller fills once every stage has run
    (:func:`worker.stats.merged`), and this stage's record."""
    candidates = trajectory.candidates
    if not candidates.solutions:
        raise SolverError.diverged()
    candidates, solutions, scores, weights, projection, lp_s = _shrunk(
        scoring, candidates, output, tolerance)
    mean_solution = weights @ solutions

    def member(c: int, weight: float) -> Member:
        return Member(weight=weight, iteration=candidates.iterations[c],
                      kind=candidates.kinds[c], objective=float(scores.objectives[c]),
                      max_violation=float(scores.max_violations[c]),
                      solution=solutions[c].tolist() if output.mixture else None)

    baseline = _baseline(scoring, trajectory.baseline, scores)
    objective, violation = scoring.point(mean_solution)
    projected, projection_stats = _projected(
        scoring, projection, trajectory.run.solve_s if trajectory.run else 0.0) \
        if output.project else (None, None)
    chosen = best_feasible(scores.objectives, scores.max_violations, tolerance)
    max_violation = expected_violation(weights, scores.violations)
    stats = SummaryStats(lp_s, len(candidates.solutions), scores.violated_columns, baseline,
                         projection_stats)
    return Result(
        algorithm=trajectory.algorithm, sizes=scoring.sizes,
        mixture=[member(c, float(weights[c])) for c in np.flatnonzero(weights)],
        expected=Expected(objective=scoring.expected_objective(weights, scores),
                          max_violation=max_violation),
        feasibility=Feasibility.judged(max_violation, tolerance),
        mean=Point(solution=mean_solution.tolist(), objective=objective,
                   max_violation=violation),
        projected=projected,
        single=member(best_single(scores.objectives, scores.violations), 1.0)
        if output.single else None,
        deterministic=member(chosen, 1.0).model_copy(
            update={"solution": solutions[chosen].tolist()}),
        model=scoring.model, resume=resume_of(trajectory), stats={},
        notes=list(scoring.notes)), stats


def _shrunk(scoring: Scoring, candidates: Candidates, output: Output, tolerance: float):
    """Score the candidates and shrink them; an infeasible mixture is rescued by the mean's
    projection (:func:`_rescued`). Returns the (possibly grown) candidates, their solutions
    ``(k, d)``, scores, weights ``(k,)``, the projection of the mixture's mean (None unless
    ``output.project`` or the rescue needed it) and the seconds the LPs took."""
    solutions = np.array(candidates.solutions)
    began = time.perf_counter()
    scores = scoring.score(solutions)
    if not np.isfinite(scores.objectives).all():
        raise SolverError.diverged()
    weights = scoring.shrink(scores)
    lp_s = time.perf_counter() - began
    projection = _projection(scoring, weights @ solutions, output.project or expected_violation(
        weights, scores.violations) > tolerance)
    began = time.perf_counter()
    rescued = _rescued(scoring, candidates, solutions, scores, weights, projection, tolerance)
    if rescued is not None:
        candidates, solutions, scores, weights = rescued
        lp_s += time.perf_counter() - began
        projection = _projection(scoring, weights @ solutions, output.project)
    return candidates, solutions, scores, weights, projection, lp_s


def resume_of(trajectory: Trajectory) -> Resume | None:
    """The Result's ``resume``: where the trajectory's linear game ended (None otherwise)."""
    end = trajectory.game_end
    if end is None:
        return None
    return Resume(algorithm=trajectory.algorithm, regret=end.regret,
                  multipliers=end.lam.tolist(), log_weights=end.log_m.tolist(),
                  log_multipliers=end.log_lam.tolist(), theta_diameter=end.theta_diameter,
                  gradient_sum=end.gradient_sum)


def _projection(scoring: Scoring, mean: np.ndarray, wanted: bool) -> Projection | None:
    """The ``mean``'s projection when it is ``wanted`` (and it has one)."""
    return scoring.project(mean) if wanted else None


def _rescued(scoring: Scoring, candidates: Candidates, solutions: np.ndarray,
             scores: CandidateScores, weights: np.ndarray, projection: Projection | None,
             tolerance: float
             ) -> tuple[Candidates, np.ndarray, CandidateScores, np.ndarray] | None:
    """The candidates with the mean's projection among them, scored and shrunk again, when
    the mixture ``weights`` violates a constraint by more than ``tolerance`` in expectation
    and the projection satisfies every one within it: the shrinking LP then has a feasible
    choice, and its least expected violation (LP1) is the projection's. None otherwise (the
    mixture is kept as it is)."""
    if projection is None or expected_violation(weights, scores.violations) <= tolerance:
        return None
    if scoring.point(projection.solution)[1] > tolerance:
        return None
    joined = candidates.last(len(candidates.solutions))
    joined.add(projection.solution, candidates.iterations[-1], "projected",
               candidates.checks[-1], candidates.seconds[-1])
    solutions = np.vstack([solutions, projection.solution[None, :]])
    scores = scoring.score(solutions)
    return joined, solutions, scores, scoring.shrink(scores)


def _baseline(scoring: Scoring, weights: np.ndarray | None,
              scores: CandidateScores) -> BaselineStats | None:
    """The algorithm's own mixture ``weights`` over its candidates, scored (zeros for the
    candidates added after them); None without one."""
    if weights is None:
        return None
    padded = np.concatenate([weights, np.zeros(scores.objectives.size - weights.size)])
    return BaselineStats(scoring.expected_objective(padded, scores),
                         expected_violation(padded, scores.violations),
                         int(np.count_nonzero(weights)))


def _projected(scoring: Scoring, projection: Projection | None,
               solve_s: float) -> tuple[Projected | None, Stats | None]:
    """The mean's ``projection`` with its objective and violation, and its record (the run
    took ``solve_s`` seconds: what a lower bound's LP may take follows from it)."""
    if projection is None:
        return None, None
    objective, violation = scoring.point(projection.solution)
    return Projected(solution=projection.solution.tolist(), objective=objective,
                     max_violation=violation, method=projection.method,
                     status=projection.status), \
        scoring.projection_stats(projection, objective, solve_s)
