"""The linear problems' :class:`~worker.pipeline.summary.Scoring`: candidates scored on the
kernel arrays' rows (or on partitions held elsewhere), projected onto W ∩ {g <= 0}, and a
certified lower bound from the projected mean where the problem is a hinge-loss LP."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from worker.algorithms.run.arrays import ProblemArrays
from worker.candidates.hinge_lp import SignedRows
from worker.candidates.lower_bound import LowerBoundStats, lower_bound_stats
from worker.candidates.scores import (
    CandidateScores,
    ObjectiveValues,
    evaluate_point,
    on_rows,
    remembered,
    score_candidates,
)
from worker.candidates.shrink import best_mixture
from worker.problem.compiled import CompiledProblem
from worker.projection import FEASIBILITY_TOL, Projection, project
from worker.result import NetworkModel, Sizes
from worker.stats import Stats


@dataclass(frozen=True)
class ProjectionStats(Stats):
    """The projection's record (:mod:`worker.stats`): its seconds and, with
    ``output.lower_bound`` on a hinge-loss LP, the lower bound's record."""

    projection_s: float
    lower_bound: LowerBoundStats | None = None


@dataclass
class LinearScoring:
    """A compiled problem's scores (module docstring).

    ``values`` and ``n`` stand in for the problem's rows when it holds none (SVRG OL on
    partitions), ``rows`` for the hinge LP's rows (pairs on partitions:
    :class:`worker.distributed.band_rows.PartitionedRows`); a rate objective is scored on its
    true rate (on partitions, a map-reduce over every example), not on the proxy the game
    played; ``lower_bound`` asks for the hinge LP's
    bound, whose LP may use what is
    left until ``deadline`` (a ``time.perf_counter()`` value), and whose ascent starts from
    the example weights ``dual_start`` (n,) when the polish left them (the primal-dual
    method's).
    """

    problem: CompiledProblem
    arrays: ProblemArrays
    values: ObjectiveValues | None = None
    n: int | None = None
    lower_bound: bool = False
    deadline: float | None = None
    dual_start: np.ndarray | None = None
    model: NetworkModel | None = None
    rows: SignedRows | None = None

    @property
    def sizes(self) -> Sizes:
        problem = self.problem
        return Sizes(parameters=problem.d, constraints=problem.m_total,
                     examples=problem.examples if self.n is None else self.n)

    @property
    def notes(self) -> list[str]:
        return self.problem.notes

    def __post_init__(self) -> None:
        true_rate = self.problem.true_rate
        self._objectives = remembered(
            true_rate.values if true_rate is not None else self.values or on_rows(self.arrays))

    def score(self, solutions: np.ndarray) -> CandidateScores:
        return score_candidates(self.arrays, self.problem, solutions, self._objectives)

    def shrink(self, scores: CandidateScores) -> np.ndarray:
        return best_mixture(scores.objectives, scores.violations)

    def expected_objective(self, weights: np.ndarray, scores: CandidateScores) -> float:
        return float(weights @ scores.objectives)

    def point(self, solution: np.ndarray) -> tuple[float, float]:
        return evaluate_point(self.arrays, self.problem, solution, self._objectives)

    def project(self, mean: np.ndarray) -> Projection | None:
        """Π_g(mean); none with rate constraints (their feasible set is not convex).

        A mean that already satisfies the box and every constraint within
        :data:`~worker.projection.FEASIBILITY_TOL` (relative, the residual the projection
        itself calls ``"optimal"``) is its own projection, ``method: "feasible"``: an exact
        or quasi-Newton answer, whose projection QP would cost as much as the solve."""
        problem = self.problem
        if problem.rates is not None:
            return None
        began = time.perf_counter()
        violation = max(float(np.max(problem.constraints.values(mean), initial=0.0)),
                        float(np.max(problem.lower - mean, initial=0.0)),
                        float(np.max(mean - problem.upper, initial=0.0)), 0.0)
        scale = max(1.0, float(np.max(np.abs(mean), initial=0.0)),
                    float(np.max(np.abs(problem.constraints.rhs), initial=0.0)))
        if violation <= FEASIBILITY_TOL * scale:
            return Projection(mean.copy(), violation, "feasible", "optimal",
                              time.perf_counter() - began)
        return project(mean, problem.constraints, problem.lower, problem.upper)

    def projection_stats(self, projection: Projection, objective: float,
                         solve_s: float) -> ProjectionStats:
        bound = None
        if self.lower_bound:
            spare = 0.0 if self.deadline is None else self.deadline - time.perf_counter()
            bound = lower_bound_stats(self.problem, projection.solution, objective, solve_s,
                                      spare, self.rows, self.dual_start)
        return ProjectionStats(projection.seconds, bound)
