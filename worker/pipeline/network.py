"""Solving a network problem (an MLP, K scores or a robust objective): the network games,
then shrinking over the candidates' term losses and true rates, then the Result.

For a robust objective a member's and the mixture's ``objective`` is the worst term's loss
(max_i L_i, of the mixture's expected losses for ``expected``); ``sizes.m`` counts the rate
constraints and one slack constraint per term (Equation 3 of Cotter et al. 2019), the m of
the m+1 bound on the support.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from worker.algorithms.loop import ProgressCallback
from worker.algorithms.network_games import run_network_game
from worker.algorithms.options import SolverOptions, Trajectory
from worker.candidates.best_single import best_single
from worker.candidates.deterministic import best_feasible
from worker.candidates.shrink import best_mixture, best_robust_mixture, expected_violation
from worker.errors import SolverError
from worker.pipeline.warm import add_warm_candidates
from worker.problem.compiled import ConstraintSet
from worker.problem.network import NetworkProblem
from worker.projection import project
from worker.result import Expected, Member, NetworkModel, Point, Projected, Result, Sizes
from worker.spec.models import Spec

DIVERGED = ("the run diverged: its parameters or their losses are not finite numbers (NaN or "
            "infinite); lower solver.eta_w (or leave it \"auto\"), or give finite bounds")


def network_algorithm(problem: NetworkProblem, requested: str) -> str:
    """``auto``: the proxy-Lagrangian with rate constraints (§6.2), else the Lagrangian
    (§6.1's robust problem; with no constraint to play, both are AdaGrad on the loss)."""
    if requested != "auto":
        return requested
    return "proxy_lagrangian" if problem.rates is not None else "lagrangian"


def solve_network(spec: Spec, problem: NetworkProblem, options: SolverOptions,
                  progress: ProgressCallback | None) -> Result:
    """Run the game, shrink, and summarize (module docstring)."""
    started = time.perf_counter()
    name = network_algorithm(problem, options.algorithm)
    trajectory = run_network_game(problem, options, name, progress,
                                  started + options.time_limit_s)
    trajectory.stats["solve_s"] = time.perf_counter() - started
    trajectory.candidates.keep_finite()
    add_warm_candidates(trajectory, options)
    return summarize_network(spec, problem, trajectory)


def summarize_network(spec: Spec, problem: NetworkProblem, trajectory: Trajectory) -> Result:
    """Shrink the candidates (:func:`best_robust_mixture` for a robust objective), report the
    mixture, its mean and, without rate constraints, the mean clipped to the box."""
    candidates = trajectory.candidates
    if not candidates.solutions:
        raise SolverError(DIVERGED)
    thetas = np.array(candidates.solutions)
    began = time.perf_counter()
    losses = problem.term_losses(thetas)
    rates = problem.rate_values(thetas)
    if not np.isfinite(losses).all():
        raise SolverError(DIVERGED)
    objectives = losses.max(axis=1)  # the worst term (robust) or the one term, (T,)
    weights = best_robust_mixture(losses, rates) if problem.robust \
        else best_mixture(objectives, rates)
    lp_s = time.perf_counter() - began
    with_solutions = spec.output.mixture

    def member(c: int, weight: float) -> Member:
        return Member(weight=weight, iteration=candidates.iterations[c],
                      kind=candidates.kinds[c], objective=float(objectives[c]),
                      max_violation=max(0.0, float(rates[c].max(initial=0.0))),
                      solution=thetas[c].tolist() if with_solutions else None)

    def point(theta: np.ndarray) -> tuple[float, float]:
        value = float(problem.term_losses(theta[None, :]).max())
        violation = max(problem.box_violation(theta),
                        float(problem.rate_values(theta[None, :]).max(initial=0.0)))
        return value, violation

    mean_theta = weights @ thetas
    value, violation = point(mean_theta)
    mean = Point(solution=mean_theta.tolist(), objective=value, max_violation=violation)
    projected = None
    if spec.output.project and problem.rates is None:
        projection = project(mean_theta, ConstraintSet(sp.csr_matrix((0, problem.d)),
                                                       np.zeros(0)),
                             problem.lower, problem.upper)
        objective, violation = point(projection.solution)
        projected = Projected(solution=projection.solution.tolist(), objective=objective,
                              max_violation=violation, method=projection.method,
                              status=projection.status)
    stats = dict(trajectory.stats, lp_s=lp_s, candidates=len(candidates.solutions),
                 terms=len(problem.terms))
    if trajectory.baseline is not None:
        stats.update(baseline_objective=float((trajectory.baseline @ losses).max()),
                     baseline_max_violation=expected_violation(trajectory.baseline, rates),
                     baseline_support=int(np.count_nonzero(trajectory.baseline)))
    single = member(best_single(objectives, rates), 1.0) if spec.output.single else None
    violations = np.maximum(rates.max(axis=1, initial=0.0), 0.0)
    chosen = best_feasible(objectives, violations, spec.solver.tolerance)
    deterministic = member(chosen, 1.0).model_copy(update={"solution": thetas[chosen].tolist()})
    network = problem.network
    return Result(
        algorithm=trajectory.algorithm,
        sizes=Sizes(d=problem.d, m=problem.m_total, n=problem.n),
        mixture=[member(c, float(weights[c])) for c in np.flatnonzero(weights)],
        expected=Expected(objective=float((weights @ losses).max()),
                          max_violation=expected_violation(weights, rates)),
        mean=mean, projected=projected, single=single, deterministic=deterministic,
        model=NetworkModel(type="mlp" if network.bias else "linear", sizes=list(network.sizes),
                           bias=network.bias),
        stats=stats, notes=list(problem.notes))
