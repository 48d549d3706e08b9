"""Solving a network problem (an MLP, K scores or a robust objective): the network games,
then shrinking over the candidates' term losses and true rates, then the Result. A small
robust objective of a linear model is solved exactly instead
(:mod:`worker.algorithms.exact.exact_robust`, chosen by
:func:`~worker.algorithms.method_choice.choose_robust`), and a small network whose only
constraint is the box by full-batch L-BFGS-B
(:mod:`worker.algorithms.runners.lbfgsb_network`, chosen by
:func:`~worker.algorithms.method_choice.choose_network`): one candidate each.

For a robust objective a member's and the mixture's ``objective`` is the worst term's loss
(max_i L_i, of the mixture's expected losses for ``expected``); ``sizes.constraints``
counts the rate constraints and one slack constraint per term (Equation 3 of Cotter et al.
2019), the m of the m+1 bound on the support.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from worker.algorithms.method_choice import Choice
from worker.algorithms.registry import run_choice
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.options import SolverOptions
from worker.candidates.scores import CandidateScores
from worker.candidates.shrink import best_mixture, best_robust_mixture
from worker.candidates.trajectory import Trajectory
from worker.pipeline.summary import SummaryStats, summarize
from worker.pipeline.warm import with_warm_candidates
from worker.problem.network import NetworkProblem
from worker.projection import Projection, project_box
from worker.result import NetworkModel, Result, Sizes
from worker.spec.models import Spec
from worker.stats import Stats


def solve_network(spec: Spec, problem: NetworkProblem, choice: Choice, options: SolverOptions,
                  progress: ProgressCallback | None) -> tuple[Result, list[Stats]]:
    """Run the chosen method (:func:`worker.algorithms.registry.run_choice`), shrink, and
    summarize (module docstring): the Result and the records of the run and the summary."""
    trajectory = run_choice(choice, problem, options, progress)
    result, summary = summarize_network(spec, problem, with_warm_candidates(
        replace(trajectory, candidates=trajectory.candidates.finite()), options))
    return result, [trajectory.run, summary]


@dataclass
class NetworkScoring:
    """A network problem's :class:`~worker.pipeline.summary.Scoring`: candidates scored by
    their term losses (the worst term for a robust objective), true rates and group losses,
    shrunk by
    :func:`best_robust_mixture` for a robust objective, the mean clipped to the box."""

    problem: NetworkProblem
    model_type: str

    @property
    def sizes(self) -> Sizes:
        problem = self.problem
        return Sizes(parameters=problem.d, constraints=problem.m_total, examples=problem.n)

    @property
    def model(self) -> NetworkModel:
        network = self.problem.network
        return NetworkModel(type=self.model_type, sizes=list(network.sizes), bias=network.bias)

    @property
    def notes(self) -> list[str]:
        return self.problem.notes

    def score(self, solutions: np.ndarray) -> NetworkScores:
        problem = self.problem
        losses = problem.term_losses(solutions)
        rates = problem.constraint_values(solutions)
        return NetworkScores(losses.max(axis=1), rates,
                             np.maximum(0.0, rates.max(axis=1, initial=0.0)),
                             {"terms": len(problem.terms)}, losses)

    def shrink(self, scores: CandidateScores) -> np.ndarray:
        assert isinstance(scores, NetworkScores)
        return best_robust_mixture(scores.losses, scores.violations) if self.problem.robust \
            else best_mixture(scores.objectives, scores.violations)

    def expected_objective(self, weights: np.ndarray, scores: CandidateScores) -> float:
        assert isinstance(scores, NetworkScores)
        return float((weights @ scores.losses).max())

    def point(self, solution: np.ndarray) -> tuple[float, float]:
        problem = self.problem
        value = float(problem.term_losses(solution[None, :]).max())
        violation = max(problem.box_violation(solution),
                        float(problem.constraint_values(solution[None, :]).max(initial=0.0)))
        return value, violation

    def project(self, mean: np.ndarray) -> Projection | None:
        """The mean clipped to the box; none with rate or group-loss constraints."""
        problem = self.problem
        if problem.rates is not None or problem.bounded:
            return None
        return project_box(mean, problem.lower, problem.upper)

    def projection_stats(self, projection: Projection, objective: float,
                         solve_s: float) -> None:
        return None


@dataclass(frozen=True)
class NetworkScores(CandidateScores):
    """:class:`CandidateScores` with every term's loss (C, terms)."""

    losses: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def summarize_network(spec: Spec, problem: NetworkProblem,
                      trajectory: Trajectory) -> tuple[Result, SummaryStats]:
    """:func:`worker.pipeline.summary.summarize` of a network problem."""
    return summarize(NetworkScoring(problem, spec.model.type), trajectory, spec.output,
                     spec.solver.tolerance)
