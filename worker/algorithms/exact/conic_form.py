"""A compiled problem as one conic program for Clarabel: min (1/2) x'Px + q'x + constant
subject to A x + s = b, s in a product of cones (nonnegative orthant, then exponential cones).

The variables are x = (w, loss variables, l1 variables):

===============  ======================================================================
objective        its part of the program
===============  ======================================================================
quadratic        P_ww = Q, q_w = c
squared          P_ww = X'CX / n, q_w = -X'Cy / n, constant y'Cy / (2n) (the Gram form)
hinge            xi (n,), q_xi = c/n; rows -y_i x_i . w - xi_i <= -1 and -xi_i <= 0
squared_hinge    xi (n,), P_xixi = diag(2c/n); rows -y_i x_i . w - xi_i <= -1 (then
                 xi_i = max(0, 1 - y_i x_i . w) at the optimum)
logistic         t, a, e (n each), q_t = c/n; log(1 + exp(u_i)) <= t_i, u_i = -y_i x_i . w,
                 as exp(u_i - t_i) <= a_i, exp(-t_i) <= e_i, a_i + e_i <= 1: the cones
                 (u_i - t_i, 1, a_i) and (-t_i, 1, e_i) in K_exp = {(x, y, z): y exp(x/y) <= z}
===============  ======================================================================

c are the example weights of mean 1, C = diag(c) (all 1 without weights:
:attr:`~worker.problem.compiled.Objective.weights`). l2 adds l2 I to P_ww; l1 adds v (d,)
with -v <= w <= v and q_v = l1. Every program has the
rows A w <= b first (their duals are the multipliers y of
:mod:`worker.algorithms.bounds.dual_bound`), then the loss
rows (a hinge's first, whose duals are c_i alpha_i / n), then the box's finite sides.
"""

from __future__ import annotations

from dataclasses import dataclass

import clarabel
import numpy as np
import scipy.sparse as sp

from worker.losses import QUADRATIC, is_piecewise_linear, loss_of
from worker.problem.compiled import CompiledProblem


@dataclass(frozen=True)
class ConicProgram:
    """Clarabel's data: P (N, N) upper triangle, q (N,), A (R, N), b (R,), the cones, the
    constant of the objective, and where w and the rows with meaningful duals are."""

    P: sp.csc_matrix
    q: np.ndarray
    A: sp.csc_matrix
    b: np.ndarray
    cones: list
    constant: float
    d: int
    m: int
    #: the hinge rows' first row (their duals times n are alpha), or None
    hinge_rows: int | None


@dataclass
class Blocks:
    """Inequality rows (G x <= h) and exponential-cone rows (s = h - G x) being collected."""

    columns: int
    inequalities: list[tuple[sp.spmatrix, np.ndarray]]
    cone_rows: tuple[sp.spmatrix, np.ndarray] | None = None

    def inequality(self, rows: sp.spmatrix, right: np.ndarray) -> None:
        """Add rows (k, N) <= right (k,)."""
        self.inequalities.append((sp.csr_matrix(rows, shape=(rows.shape[0], self.columns)),
                                  right))


def conic_program(problem: CompiledProblem) -> ConicProgram:
    """The program of the module docstring for ``problem`` (no rate constraints)."""
    objective = problem.objective
    d, n, kind = problem.d, objective.n, objective.kind
    loss_count = 0 if kind == QUADRATIC else _form(kind).program_variables * n
    l1_count = d if objective.l1 > 0 else 0
    columns = d + loss_count + l1_count
    blocks = Blocks(columns, [])
    blocks.inequality(sp.hstack([problem.constraints.matrix,
                                 sp.csr_matrix((problem.m, columns - d))]),
                      problem.constraints.rhs)
    q = np.zeros(columns)
    curvature, loss_curvature, constant = _loss_part(problem, blocks, q)
    P = sp.block_diag([curvature + objective.l2 * sp.identity(d), sp.diags(loss_curvature),
                       sp.csr_matrix((l1_count, l1_count))], format="csc")
    _box_rows(problem, blocks)
    if l1_count:
        identity, start = sp.identity(d), d + loss_count
        rows = sp.hstack([sp.vstack([identity, -identity]), sp.csr_matrix((2 * d, loss_count)),
                          sp.vstack([-identity, -identity])])
        blocks.inequality(rows, np.zeros(2 * d))
        q[start:] = objective.l1
    inequality = sp.vstack([rows for rows, _ in blocks.inequalities], format="csr")
    right = np.concatenate([right for _, right in blocks.inequalities])
    cones = [clarabel.NonnegativeConeT(inequality.shape[0])]
    if blocks.cone_rows is not None:
        inequality = sp.vstack([inequality, blocks.cone_rows[0]], format="csr")
        right = np.concatenate([right, blocks.cone_rows[1]])
        cones += [clarabel.ExponentialConeT()] * (2 * n)
    return ConicProgram(P=sp.triu(P, format="csc"), q=q, A=inequality.tocsc(),
                        b=right, cones=cones, constant=constant, d=d, m=problem.m,
                        hinge_rows=problem.m if is_piecewise_linear(kind) else None)


def _form(kind: int):
    """The :class:`~worker.algorithms.exact.loss_forms.LossForm` of a loss code."""
    return loss_of(kind).conic.load()


def _loss_part(problem: CompiledProblem, blocks: Blocks,
               q: np.ndarray) -> tuple[sp.spmatrix, np.ndarray, float]:
    """Fill q with the loss's part and add its rows; return P's block on w (d, d), P's
    diagonal on the loss variables, and the objective's constant."""
    objective = problem.objective
    if objective.kind == QUADRATIC:
        q[:problem.d] = objective.linear
        return sp.csr_matrix(objective.quadratic), np.zeros(0), 0.0
    return _form(objective.kind).program(problem, blocks, q)


def exponential_rows(signed: sp.csr_matrix, start: int,
                     columns: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """The 6 rows per example of the logistic's two exponential cones (module docstring),
    as s = h - G x: (-y_i x_i . w - t_i, 1, a_i) then (-t_i, 1, e_i), with w the first
    columns and t, a, e (n each) from column ``start`` on: G (6n, columns), h (6n,)."""
    n = signed.shape[0]
    examples = np.arange(n)
    t, a, e = start + examples, start + n + examples, start + 2 * n + examples
    coo = signed.tocoo()
    rows = np.concatenate([6 * coo.row, 6 * examples, 6 * examples + 2, 6 * examples + 3,
                           6 * examples + 5])
    cols = np.concatenate([coo.col, t, a, t, e])
    data = np.concatenate([coo.data, np.ones(n), -np.ones(n), np.ones(n), -np.ones(n)])
    right = np.zeros(6 * n)
    right[6 * examples + 1] = right[6 * examples + 4] = 1.0
    return sp.csr_matrix((data, (rows, cols)), shape=(6 * n, columns)), right


def _box_rows(problem: CompiledProblem, blocks: Blocks) -> None:
    """w_j <= upper_j and -w_j <= -lower_j for the finite sides."""
    for side, sign in ((problem.upper, 1.0), (problem.lower, -1.0)):
        finite = np.flatnonzero(np.isfinite(side))
        rows = sp.csr_matrix((np.full(finite.size, sign), (np.arange(finite.size), finite)),
                             shape=(finite.size, blocks.columns))
        blocks.inequality(rows, sign * side[finite])
