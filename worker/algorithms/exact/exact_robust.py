"""The exact methods on a robust objective of a linear model (``max_of``) or under group-loss
constraints: the epigraph program of :mod:`.robust_form` by one Clarabel solve, and its
certificate.

For any lambda in the simplex and mu >= 0, sum_k lambda_k f_k(w) + sum_G mu_G (L_G(w) -
bound_G) <= max_k f_k(w) wherever the group losses hold, so the minimum over the box of that
Lagrangian is a lower bound on the optimum; with each loss replaced by a linear minorant (its
tangent at the answer, or for a hinge term (1/n) sum_i c_i alpha_i (1 - y_i x_i . w) with
alpha in [0, 1]^n and c its example weights of mean 1) that minimum separates by coordinate
(:func:`~worker.algorithms.bounds.dual_bound.coordinate_minima`, the bound of
:mod:`worker.algorithms.bounds.dual_bound` with the weighted l1 and l2). lambda comes from the
epigraph rows' duals, alpha from the margin rows' (lambda_k c_i alpha_i / n_k at the optimum),
mu from the group losses' rows.
``stats`` are the exact methods' own (``stopped_by``, ``lower_bound``, ``gap``,
``relative_gap``, ``certificate``).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from worker.algorithms.bounds.dual_bound import coordinate_minima
from worker.algorithms.bounds.smooth_part import loss_value_and_gradient
from worker.algorithms.exact.exact import clarabel_solve
from worker.algorithms.exact.robust_form import program_terms, robust_program
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.one_answer import answer_trajectory, gap_stats
from worker.candidates.dual_certificate import alpha_of_duals
from worker.candidates.trajectory import Trajectory
from worker.losses import is_piecewise_linear
from worker.problem.compiled import Objective
from worker.problem.network import NetworkProblem, Term


def run_exact_robust(name: str, problem: NetworkProblem, progress: ProgressCallback | None,
                     deadline: float) -> Trajectory:
    """The problem's optimum w (d,) as the one candidate, with its certificate.

    ``name`` is ``exact_conic`` (needed when a loss is logistic) or ``exact_qp``."""
    began = time.perf_counter()
    program = robust_program(problem)
    x, z, stats = clarabel_solve(program.P, program.q, program.A, program.b, program.cones,
                                 max(deadline - began, 1e-3))
    w = np.clip(x[:problem.d], problem.lower, problem.upper)
    terms = program_terms(problem)
    hinge_duals = {k: z[row:row + terms[k].n] for k, row in program.hinge_rows.items()}
    worst = float(problem.term_losses(w[None, :]).max())
    violation = max(problem.box_violation(w),
                    float(problem.bounded_values(w[None, :]).max(initial=0.0)))
    stats |= gap_stats(worst, robust_bound(problem, w, z[:len(terms)], hinge_duals))
    return answer_trajectory(name, w, lambda: (worst, violation), stats, began, progress)


def robust_bound(problem: NetworkProblem, w: np.ndarray, weights: np.ndarray,
                 hinge_duals: dict[int, np.ndarray]) -> float:
    """A lower bound on min over the box of max_k f_k where every group loss holds (module
    docstring).

    Parameters
    ----------
    problem : NetworkProblem
        A robust or group-loss-constrained linear problem
        (:func:`~worker.algorithms.exact.robust_form.exact_robust_applies`).
    w : ndarray, shape (d,)
        Where the smooth losses' tangents are taken.
    weights : ndarray, shape (q + m_g,)
        The terms' weights lambda, then the group losses' mu (negative entries taken as 0;
        all divided by the sum of lambda, so that lambda sums to 1).
    hinge_duals : dict of int to ndarray
        For hinge term k of :func:`~worker.algorithms.exact.robust_form.program_terms`, its
        margin rows' duals (n_k,): alpha = n_k dual / (weight_k c) (c its example weights of
        mean 1; clipped to [0, 1]); a hinge term without them takes its subgradient's tangent.

    Returns
    -------
    float
        The bound, -inf when it is not finite or every weight is 0.
    """
    raw = np.maximum(weights, 0.0)
    q = len(problem.terms)
    if raw[:q].sum() <= 0:
        return -np.inf
    lam = raw / raw[:q].sum()
    constant = -float(lam[q:] @ np.array([b.bound for b in problem.bounded]))
    slope = np.zeros(problem.d)
    for k, term in enumerate(program_terms(problem)):
        if lam[k] == 0:
            continue
        duals = hinge_duals.get(k) if is_piecewise_linear(term.code) else None
        value, gradient = _minorant(term, w, None if duals is None else np.clip(
            alpha_of_duals(term.n * duals / raw[k], term.example_weights()), 0.0, 1.0))
        constant += lam[k] * value
        slope += lam[k] * gradient
    l1 = float(sum(lam[k] * term.l1 for k, term in enumerate(problem.terms)))
    l2 = float(sum(lam[k] * term.l2 for k, term in enumerate(problem.terms)))
    bound = constant + float(coordinate_minima(slope, l1, l2, problem.lower,
                                               problem.upper).sum())
    return bound if np.isfinite(bound) else -np.inf


def _minorant(term: Term, w: np.ndarray, alpha: np.ndarray | None) -> tuple[float, np.ndarray]:
    """(c, g) with the term's loss >= c + g . w' everywhere: the hinge's alpha-minorant, or
    the tangent at w."""
    if alpha is not None:
        alpha = alpha * term.example_weights()
        signed = term.features.multiply(term.labels[:, None])
        return float(alpha.sum()) / term.n, -np.asarray(signed.T @ alpha).ravel() / term.n
    objective = Objective(term.code, term.features, term.labels,
                          sp.csr_matrix((0, 0)), np.zeros(0), weights=term.weights)
    value, gradient = loss_value_and_gradient(objective, w)
    return value - float(gradient @ w), gradient
