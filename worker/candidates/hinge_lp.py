"""The LP of a hinge-loss objective in which only some examples keep their hinge.

The hinge h(z) = max(0, 1 - z) is 1 - z below the kink and 0 above it. Given the margins
z_i = y_i x_i . w_ref at a reference point and a set K of kept examples, every other example
is replaced by the piece it lies on at w_ref:

    f_K(w) = (1/n) [ sum_{i in below} c_i (1 - z_i(w)) + sum_{i in K} c_i xi_i ],
    xi_i >= 1 - z_i(w), xi_i >= 0 (i in K),

(c the example weights of mean 1, all 1 without weights)
with ``below`` the examples outside K whose margin is under 1. f_K <= f everywhere (each
piece is below the hinge), and f_K = f wherever no example outside K crosses the kink. The
LP has d + |K| variables and m + |K| rows; :mod:`worker.candidates.lower_bound` minimizes it
over the whole feasible set, :mod:`worker.candidates.polish` over a trust region.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from worker.losses import is_piecewise_linear
from worker.problem.compiled import CompiledProblem

#: Rows of |x| :meth:`SignedRows.reach` holds at once.
CHUNK_ROWS = 8192


def has_hinge_lp(problem: CompiledProblem, rows: SignedRows | None = None) -> bool:
    """Whether the objective is an LP: a hinge loss held in memory (or whose ``rows`` are
    read elsewhere), no l1, l2, quadratic part or rate constraints, and not a rate
    objective's hinge proxy (``pairwise_hinge`` compiles to a hinge)."""
    objective = problem.objective
    return (is_piecewise_linear(objective.kind) and objective.l1 == 0 and objective.l2 == 0
            and problem.rates is None and problem.true_rate is None
            and (problem.n > 0 or rows is not None))


class SignedRows:
    """The rows y_i x_i (n, d) of a hinge objective, without a copy of its features: the
    margins at w are ``rows.margins(w)``. (A signed copy of the features held the pair data
    twice, and the polish and the lower bound each made one, plus one of its absolute
    values: at 6.1M pairs the copies made the job's peak.)

    Parameters
    ----------
    features : sparse matrix, shape (n, d)
        The examples x_i, CSR.
    labels : ndarray, shape (n,)
        The labels y_i.
    weights : ndarray, shape (n,), or None
        The example weights c of mean 1 (None: all 1), which every sum over the rows
        carries.
    """

    def __init__(self, features: sp.csr_matrix, labels: np.ndarray,
                 weights: np.ndarray | None = None) -> None:
        self.features, self.labels = features, labels
        self.weights = np.ones(features.shape[0]) if weights is None else weights
        self.shape = features.shape

    def margins(self, w: np.ndarray) -> np.ndarray:
        """z_i = y_i x_i . w, shape (n,)."""
        return self.labels * (self.features @ w)

    def reach(self) -> np.ndarray:
        """|x_i|_1 (n,): how far a margin moves per unit of |w - w'|_inf."""
        features, totals = self.features, np.empty(self.shape[0])
        for start in range(0, self.shape[0], CHUNK_ROWS):      # |x| a block at a time
            block = abs(features[start:start + CHUNK_ROWS])
            totals[start:start + block.shape[0]] = np.asarray(block.sum(axis=1)).ravel()
        return totals

    def transpose_dot(self, weights: np.ndarray) -> np.ndarray:
        """sum_i c_i weights_i y_i x_i, shape (d,), for ``weights`` (n,)."""
        return self.features.T @ (self.labels * self.weights * weights)

    def mass(self, weights: np.ndarray) -> float:
        """sum_i c_i weights_i for ``weights`` (n,)."""
        return float(self.weights @ weights)

    def take(self, kept: np.ndarray) -> sp.csr_matrix:
        """The rows y_i x_i of the examples ``kept`` (k,), shape (k, d)."""
        return sp.csr_matrix(self.features[kept].multiply(self.labels[kept][:, None]))


def signed_rows(problem: CompiledProblem) -> SignedRows:
    """The rows y_i x_i (n, d) of the problem's hinge objective (:class:`SignedRows`)."""
    objective = problem.objective
    return SignedRows(objective.features, objective.labels, objective.weights)


@dataclass(frozen=True)
class PiecewiseLP:
    """min cost . x + constant s.t. rows x <= right, lower <= x <= upper, with x = (w, xi):
    w (d,) first, then one xi per kept example."""

    cost: np.ndarray
    rows: sp.csr_matrix
    right: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    constant: float


def may_bind(matrix: sp.csr_matrix, rhs: np.ndarray, lower: np.ndarray,
             upper: np.ndarray) -> np.ndarray:
    """Which rows (m,) of A w <= b (``matrix`` (m, d), ``rhs`` (m,)) some w in the box
    ``lower <= w <= upper`` (d,) violates: those whose largest value over the box,
    sum_j max(a_ij lower_j, a_ij upper_j), exceeds b_i. The others hold on the whole box, so
    an LP over the box needs only these (an infinite side keeps every row touching it)."""
    positive, negative = matrix.maximum(0), matrix.minimum(0)
    with np.errstate(invalid="ignore"):          # 0 * inf for coordinates a row lacks
        largest = positive @ _finite(upper) + negative @ _finite(lower)
    unbounded = (positive @ np.isinf(upper) + abs(negative) @ np.isinf(lower)) > 0
    return unbounded | (largest > rhs)


def _finite(bounds: np.ndarray) -> np.ndarray:
    """The bounds with infinite sides set to 0 (:func:`may_bind` counts those apart)."""
    return np.where(np.isfinite(bounds), bounds, 0.0)


def piecewise_lp(problem: CompiledProblem, signed: SignedRows, margins: np.ndarray,
                 kept: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                 binding: np.ndarray | None = None) -> PiecewiseLP:
    """The LP of f_K (module docstring) over ``lower <= w <= upper`` and A w <= b (its rows
    ``binding`` (m,) bool, when given: the others hold on the box, :func:`may_bind`).

    Parameters
    ----------
    problem : CompiledProblem
        A problem for which :func:`has_hinge_lp` holds: constraints A (m, d), b (m,).
    signed : SignedRows, shape (n, d)
        :func:`signed_rows` of the problem.
    margins : ndarray, shape (n,)
        The margins at the reference point; they choose each dropped example's piece.
    kept : ndarray of int, shape (k,)
        The examples that keep their hinge, sorted.
    lower, upper : ndarray, shape (d,)
        Bounds on w (the box, or a trust region inside it).
    """
    n = signed.shape[0]
    matrix, rhs = problem.constraints.matrix, problem.constraints.rhs
    if binding is not None:
        matrix, rhs = matrix[binding], rhs[binding]
    below = margins < 1.0
    below[kept] = False
    cost = np.concatenate([-signed.transpose_dot(below.astype(np.float64)),
                           signed.weights[kept]]) / n
    hinges = sp.hstack([-signed.take(kept), -sp.identity(kept.size)])       # -z_i - xi_i <= -1
    rows = sp.vstack([sp.hstack([matrix, sp.csr_matrix((matrix.shape[0], kept.size))]),
                      hinges], format="csr")
    return PiecewiseLP(cost=cost, rows=rows, right=np.concatenate([rhs, -np.ones(kept.size)]),
                       lower=np.concatenate([lower, np.zeros(kept.size)]),
                       upper=np.concatenate([upper, np.full(kept.size, np.inf)]),
                       constant=signed.mass(below.astype(np.float64)) / n)


def solve_lp(lp, seconds: float) -> tuple[np.ndarray | None, str]:
    """Minimize the :class:`PiecewiseLP` with HiGHS's interior point (no crossover: a
    crossover once ran for minutes at the paper's size, and neither the polish nor the lower
    bound needs a vertex) within ``seconds``: (x, HiGHS's status), x None unless the status
    is ``"optimal"`` or, where the interior point stopped without classifying its last
    iterate (``"unknown"``), HiGHS deems that iterate primal feasible (the polish takes a
    point only if it lowers f)."""
    if seconds <= 0:
        return None, "time_limit"
    highs, status = _run(lp, seconds, "ipm")
    feasible = highs.getInfo().primal_solution_status == highspy.kSolutionStatusFeasible
    usable = status == "optimal" or status == "unknown" and feasible
    return (np.array(highs.getSolution().col_value) if usable else None), status


def lp_duals(lp, seconds: float, solver: str = "pdlp"
             ) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """The :class:`PiecewiseLP`'s point (or None) and row multipliers (>= 0, one per row of
    ``lp.rows``; or None) by HiGHS's ``solver`` (its first-order PDLP by default) within
    ``seconds``, with HiGHS's status. Past the time limit PDLP's last multipliers are still
    given: any multipliers give a valid bound through
    :func:`worker.candidates.dual_certificate.dual_value`."""
    if seconds <= 0:
        return None, None, "time_limit"
    highs, status = _run(lp, seconds, solver)
    solution = highs.getSolution()
    point = np.array(solution.col_value) if status == "optimal" else None
    duals = -np.asarray(solution.row_dual, dtype=np.float64)
    if duals.size != lp.rows.shape[0] or not (solution.dual_valid or status == "time_limit"):
        duals = None
    return point, duals, status


def _run(lp, seconds: float, solver: str):
    """HiGHS with ``solver`` run on the LP for at most ``seconds``: (the solver, its status
    in lower case: ``"optimal"``, ``"time_limit"``, ``"unbounded"`` ...)."""
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = lp.cost.size, lp.rows.shape[0]
    model.col_cost_, model.col_lower_, model.col_upper_ = lp.cost, lp.lower, lp.upper
    model.row_lower_ = np.full(lp.right.size, -highspy.kHighsInf)
    model.row_upper_ = lp.right
    columns = lp.rows.tocsc()
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_, model.a_matrix_.index_, model.a_matrix_.value_ = (
        columns.indptr, columns.indices, columns.data)
    # The bare solver: highspy.Highs sets up callbacks, which prints HiGHS's banner to stdout
    # (where the CLI writes the Result) before output can be turned off.
    highs = highspy._Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("solver", solver)
    highs.setOptionValue("run_crossover", "off")
    highs.setOptionValue("time_limit", float(seconds))
    highs.passModel(model)
    highs.run()
    status = highs.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return highs, "optimal"
    if status == highspy.HighsModelStatus.kTimeLimit:
        return highs, "time_limit"
    return highs, highs.modelStatusToString(status).lower()
