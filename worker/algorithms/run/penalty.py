"""Choosing the penalty weight gamma (LightTouch paper, Lemma 1 and §2.2).

Lemma 1 makes the penalized objective f + gamma max(0, max_i g_i) exact once
gamma > L_f / rho. In KKT terms, with unit-norm constraint rows, that is gamma > ||lambda*||_1,
the sum of the optimal multipliers. ``gamma: "auto"`` estimates lambda* during the run by
nonnegative least squares on the stationarity condition at the running average,
at the checkpoints of :func:`gamma_checkpoints`,

    min_{lambda >= 0, nu >= 0} || grad f(w) + A_act' lambda + (box normals)' nu ||_2,

over the constraints (and bounds) active at w, and raises gamma to twice the estimate; the
step size eta_w shrinks in proportion, since the gradient bound grows with gamma.
This goes beyond the paper, which leaves gamma to a grid search (§6.1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import lsq_linear
from scipy.sparse.linalg import LinearOperator

from worker.blas import one_blas_thread
from worker.kernels.constraints import max_violation
from worker.kernels.layout import ProblemArrays
from worker.kernels.objective import objective_gradient, objective_value
from worker.problem.compiled import CompiledProblem

#: Constraints within this distance of binding (relative to max(1, |w|_inf)) count as active.
ACTIVE_TOLERANCE = 1e-2
#: A running average violating by more than this (relative to max(1, |w|_inf)) is infeasible.
VIOLATION_TOLERANCE = 1e-3
#: gamma is set to this multiple of the estimated ||lambda*||_1.
SAFETY_FACTOR = 2.0
GAMMA_CEILING = 1e6
#: Inner LSMR iterations per step of the bounded least squares. Unbounded, LSMR runs to its
#: own tolerance at every step, which on the paper's lattice with every ordering row active
#: took longer than a run's time limit for little more accuracy in the sum of multipliers
#: (measured: docs/algorithms.md, "Automatic γ").
LSMR_ITERATIONS = 1_000
#: The fits of a run touch at most this share of the nonzeros its iterations' constraint
#: checks touched (fits always run while they have touched fewer than GAMMA_FREE_NONZEROS in
#: all, about a second of fitting): at a lattice of a hundred thousand ordering rows near
#: binding the fits took most of the algorithm's share without raising gamma, and an entry a
#: fit touches costs about ten times the time of one a check touches (the least squares'
#: vector work comes with every product), so this is about a tenth of the run's time
#: (measured: docs/guarantees.md#the-time-split-each-stage-until-it-slows). Work is counted,
#: not timed, so that a spec and seed give the same answer on any machine.
GAMMA_SHARE = 0.01
GAMMA_FREE_NONZEROS = 30_000_000
#: One checkpoint raises gamma at most this much: estimates at a poorly converged average
#: overshoot, and a too-large gamma slows every later step.
MAX_GROWTH = 4.0


class FitStopped(Exception):
    """A fit of the multipliers reached its :class:`FitBudget` (its deadline or its
    nonzeros)."""


@dataclass
class FitBudget:
    """What one fit of the multipliers may take: until ``deadline`` (a
    ``time.perf_counter()`` value) and ``nonzeros`` matrix entries touched by its products;
    ``used`` counts the entries touched so far."""

    deadline: float = math.inf
    nonzeros: float = math.inf
    used: int = 0

    def charge(self, nonzeros: int) -> None:
        """Count a product touching ``nonzeros`` entries; :class:`FitStopped` past the
        budget."""
        self.used += nonzeros
        if self.used > self.nonzeros or time.perf_counter() >= self.deadline:
            raise FitStopped


def multiplier_mass(arrays: ProblemArrays, problem: CompiledProblem, w: np.ndarray,
                    budget: FitBudget | None = None) -> tuple[float, float]:
    """(estimated ||lambda*||_1, ||grad f(w)||_2) at a near-optimal point w (shape (d,));
    raises :class:`FitStopped` when the fit passes ``budget``."""
    tolerance = ACTIVE_TOLERANCE * max(1.0, float(np.abs(w).max(initial=0.0)))
    _, multipliers, gradient = stationary_multipliers(arrays, problem, w, tolerance, budget)
    return float(multipliers.sum()), float(np.linalg.norm(gradient))


def stationary_multipliers(arrays: ProblemArrays, problem: CompiledProblem, w: np.ndarray,
                           tolerance: float, budget: FitBudget | None = None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nonnegative least-squares multipliers of the module docstring at w (shape (d,)).
    With a ``budget``, every product of the least squares is charged to it, which raises
    :class:`FitStopped` once it is spent.

    Where w_j = 0 the l1 term's subgradient is the one in [-l1, l1] of least norm for the
    stationarity residual (it soft-thresholds the rest of the gradient by l1), so an exact
    zero is not mistaken for a binding constraint.

    Returns
    -------
    active : ndarray of int, shape (k,)
        The constraints with g_i(w) >= -tolerance.
    multipliers : ndarray, shape (k,)
        lambda >= 0 of those constraints.
    gradient : ndarray, shape (d,)
        The (soft-thresholded) gradient of f at w.
    """
    gradient = np.empty_like(w)
    objective_gradient(arrays, w, gradient)
    zero = w == 0
    gradient[zero] = np.sign(gradient[zero]) * np.maximum(np.abs(gradient[zero]) - arrays.l1,
                                                          0.0)
    active = np.flatnonzero(problem.constraints.values(w) >= -tolerance)
    if active.size == 0:
        return active, np.zeros(0), gradient
    at_upper = np.flatnonzero(w >= problem.upper - tolerance)
    at_lower = np.flatnonzero(w <= problem.lower + tolerance)
    d = w.shape[0]
    normals = sp.vstack([
        problem.constraints.matrix[active],
        sp.csr_matrix((np.ones(at_upper.size), (np.arange(at_upper.size), at_upper)),
                      shape=(at_upper.size, d)),
        sp.csr_matrix((-np.ones(at_lower.size), (np.arange(at_lower.size), at_lower)),
                      shape=(at_lower.size, d)),
    ], format="csr")
    with one_blas_thread():
        fit = lsq_linear(charged(normals.T.tocsr(), budget), -gradient, bounds=(0.0, np.inf),
                         lsmr_tol="auto", max_iter=200, lsmr_maxiter=LSMR_ITERATIONS)
    return active, fit.x[:active.size], gradient


def charged(matrix: sp.csr_matrix, budget: FitBudget | None
            ) -> sp.csr_matrix | LinearOperator:
    """``matrix`` (r, c) itself without a budget, else an operator of its products that
    charges each one's nonzeros to ``budget``."""
    if budget is None:
        return matrix
    transposed = matrix.T.tocsr()

    def counted(operator: sp.csr_matrix):
        def product(x: np.ndarray) -> np.ndarray:
            budget.charge(operator.nnz)
            return operator @ x
        return product

    return LinearOperator(matrix.shape, matvec=counted(matrix), rmatvec=counted(transposed),
                          dtype=matrix.dtype)


def penalized_objective(arrays: ProblemArrays, w: np.ndarray, gamma: float) -> float:
    """f + gamma [max_i g_i]_+ at w (shape (d,)), over every example and constraint."""
    return float(objective_value(arrays, w) + gamma * max(0.0, max_violation(arrays, w)))


def rescaled_step(eta_w: float, gamma_old: float, gamma_new: float, gradient_norm: float) -> float:
    """eta_w scaled by (G_f + gamma_old) / (G_f + gamma_new): SGD's step goes as 1/G (the
    gradient bound of f + gamma max(0, g) is G_f + gamma for unit-norm rows)."""
    return eta_w * (gradient_norm + gamma_old) / (gradient_norm + gamma_new)


def raised_gamma(gamma: float, mass: float, violation: float, scale: float) -> float:
    """The new gamma: never lower, at least SAFETY_FACTOR * ||lambda*||_1, at most 4x higher.

    A running average that still violates its constraints by more than
    ``VIOLATION_TOLERANCE * scale`` while the estimate is saturated (at least half of gamma)
    sits near an infeasible penalized minimizer: gamma is below the Lemma 1 threshold, and the
    estimate, which cannot exceed gamma there, is no guide; gamma is at least doubled.
    """
    saturated = violation > VIOLATION_TOLERANCE * scale and mass >= gamma / SAFETY_FACTOR
    target = SAFETY_FACTOR * max(mass, gamma if saturated else 0.0)
    return float(min(max(gamma, target), MAX_GROWTH * gamma, GAMMA_CEILING))


def gamma_checkpoints(start: int, stop: int) -> list[int]:
    """Iterations at which ``auto`` re-estimates gamma: 1/64, 1/32, ..., 1/2 of the way.

    Below the threshold the penalized minimizer is infeasible and the estimate saturates at
    the current gamma, so each checkpoint can at least double it (up to 64x in all); the
    running average restarts when gamma changes, so the last half of the run is never lost.
    """
    span = stop - start
    return sorted({start + span // 2**k for k in range(1, 7) if span // 2**k >= 1000})
