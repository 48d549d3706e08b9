"""A robust objective of a linear model (``max_of``) as one conic program for Clarabel: its
epigraph (Equation 3 of Cotter, Jiang, Sridharan 2019, solved exactly instead of by a game)

    min t  subject to  L_k(w) + l1_k ||w||_1 + (l2_k/2) ||w||^2 <= t  for every term k
                       L_G(w) <= bound_G                               for every group loss G

over the box (one term without group losses is not robust: t is its objective; with them,
the same program is the group-loss-constrained problem, docs/rates.md#group-losses), as
min q'x s.t. A x + s = b, s in the nonnegative orthant, then second-order cones, then
exponential cones. The variables x are w (d), t, s if some l2_k > 0 (with ||w||^2 <= s),
v (d) if some l1_k > 0 (with -v <= w <= v), then each term's own (a group loss is a term
without a regularizer):

===============  ======================================================================
term's loss      its variables and cones (n examples)
===============  ======================================================================
hinge            xi (n): -y_i x_i . w - xi_i <= -1, -xi_i <= 0; its part (1/n) sum xi
squared_hinge    xi (n), r: -y_i x_i . w - xi_i <= -1 and ||xi||^2 <= n r; its part r
squared          r: ||X w - y||^2 <= 2 n r; its part r
logistic         t_i, a_i, e_i (n each): the exponential cones of :mod:`.conic_form`;
                 its part (1/n) sum t_i
===============  ======================================================================

A bound ||z||^2 <= c u is the second-order cone (c u + 1, c u - 1, 2 z). Sharing s and v
between terms is exact: every term's row is nondecreasing in both, so the optimum has
s = ||w||^2 and v = |w|. The first rows are the terms' epigraph rows, whose duals lambda
(summing to 1 at the optimum) weigh the terms in the certificate
(:func:`worker.algorithms.exact.exact_robust.robust_bound`), then the group losses' rows,
whose duals mu weigh their constraints there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import clarabel
import numpy as np
import scipy.sparse as sp

from worker.algorithms.exact.conic_form import exponential_rows
from worker.losses import loss_of
from worker.problem.network import NetworkProblem, Term


def exact_robust_applies(problem: NetworkProblem) -> bool:
    """A ``max_of`` or group-loss constraints on a linear model (one score, no bias), no
    rate constraints, every term's and group loss's loss one with a conic form
    (:attr:`worker.losses.Loss.conic`): convex, and a program of this module."""
    network = problem.network
    return ((problem.robust or bool(problem.bounded)) and problem.rates is None
            and not network.bias and network.outputs == 1 and len(network.sizes) == 2
            and all(_conic(term) is not None for term in program_terms(problem)))


def program_terms(problem: NetworkProblem) -> list[Term]:
    """The objective's terms, then the group losses' (the order of the epigraph rows)."""
    return problem.terms + [bounded.term for bounded in problem.bounded]


@dataclass
class Rows:
    """Rows s = h - G x of one cone kind, collected as COO triplets."""

    rows: list = field(default_factory=list)
    cols: list = field(default_factory=list)
    values: list = field(default_factory=list)
    right: list = field(default_factory=list)
    count: int = 0

    def add(self, rows, cols, values, right: np.ndarray) -> int:
        """Rows (local indices 0..len(right)-1) of G and their h; their first row."""
        start = self.count
        self.rows.append(np.asarray(rows, dtype=np.int64) + start)
        self.cols.append(np.asarray(cols, dtype=np.int64))
        self.values.append(np.asarray(values, dtype=np.float64))
        self.right.append(np.asarray(right, dtype=np.float64))
        self.count += len(right)
        return start

    def matrix(self, columns: int) -> tuple[sp.csc_matrix, np.ndarray]:
        """G (count, columns) and h (count,)."""
        return (sp.csc_matrix((np.concatenate(self.values or [np.zeros(0)]),
                               (np.concatenate(self.rows or [np.zeros(0, np.int64)]),
                                np.concatenate(self.cols or [np.zeros(0, np.int64)]))),
                              shape=(self.count, columns)),
                np.concatenate(self.right or [np.zeros(0)]))


@dataclass(frozen=True)
class RobustProgram:
    """Clarabel's data: P (N, N) zero, q (N,) = e_t, A (R, N), b (R,), the cones; the first
    ``len(problem.terms)`` rows are the epigraph rows, the next ``len(problem.bounded)`` the
    group losses' rows, and ``hinge_rows[k]`` is the first of the margin rows of term k of
    :func:`program_terms` when it is a hinge term."""

    P: sp.csc_matrix
    q: np.ndarray
    A: sp.csc_matrix
    b: np.ndarray
    cones: list
    hinge_rows: dict[int, int]


def robust_program(problem: NetworkProblem) -> RobustProgram:
    """The program of the module docstring for ``problem`` (:func:`exact_robust_applies`)."""
    d, terms = problem.d, program_terms(problem)
    l2, l1 = any(term.l2 > 0 for term in terms), any(term.l1 > 0 for term in terms)
    s, v = d + 1, d + 1 + l2
    starts, at = [], v + (d if l1 else 0)
    for term in terms:
        starts.append(at)
        at += _conic(term).load().epigraph_variables(term.n)
    columns = at
    linear, seconds, cones = Rows(), Rows(), []
    q = len(problem.terms)
    for k, (term, start) in enumerate(zip(terms, starts, strict=True)):  # epigraph rows first
        cols, values = _conic(term).load().epigraph_part(term, start)
        if k >= q:                                           # L_G(w) <= bound_G
            linear.add(np.zeros(len(cols)), cols, values, [problem.bounded[k - q].bound])
            continue
        if l1:
            cols, values = [*cols, *range(v, v + d)], [*values, *[term.l1] * d]
        if l2:
            cols, values = [*cols, s], [*values, term.l2 / 2]
        linear.add(np.zeros(len(cols) + 1), [*cols, d], [*values, -1.0], [0.0])
    hinge_rows = {k: _conic(term).load().epigraph_rows(term, start, linear, seconds, cones)
                  for k, (term, start) in enumerate(zip(terms, starts, strict=True))}
    if l1:
        j = np.arange(d)
        linear.add(np.tile(np.arange(2 * d), 2), np.concatenate([j, j, v + j, v + j]),
                   np.concatenate([np.ones(d), -np.ones(d), -np.ones(2 * d)]), np.zeros(2 * d))
    for side, sign in ((problem.upper, 1.0), (problem.lower, -1.0)):
        finite = np.flatnonzero(np.isfinite(side))
        linear.add(np.arange(finite.size), finite, np.full(finite.size, sign),
                   sign * side[finite])
    if l2:
        square_cone(seconds, cones, s, 1.0, np.arange(d), np.arange(d), 2.0 * np.ones(d),
                    np.zeros(d))
    exponential = [exponential_rows(signed_rows(term), start, columns)
                   for term, start in zip(terms, starts, strict=True)
                   if _conic(term).exponential]
    parts = [linear.matrix(columns), seconds.matrix(columns), *exponential]
    q = np.zeros(columns)
    q[d] = 1.0
    return RobustProgram(
        P=sp.csc_matrix((columns, columns)), q=q,
        A=sp.vstack([part for part, _ in parts], format="csc"),
        b=np.concatenate([right for _, right in parts]),
        cones=[clarabel.NonnegativeConeT(linear.count), *cones,
               *[clarabel.ExponentialConeT()] * (2 * sum(t.n for t in terms
                                                         if _conic(t).exponential))],
        hinge_rows={k: row for k, row in hinge_rows.items() if row is not None})


def _conic(term: Term):
    """The term's loss's :class:`~worker.losses.ConicForm` (None: it has none)."""
    return loss_of(term.code).conic


def square_cone(seconds: Rows, cones: list, u: int, c: float, rows, cols, values,
                 right: np.ndarray) -> None:
    """||z||^2 <= c x_u as the cone (c x_u + 1, c x_u - 1, z), z = right - G' x with G' the
    triplets (rows, cols, -values): its k + 2 rows after the others of its kind."""
    k = len(right)
    seconds.add(np.concatenate([[0, 1], np.asarray(rows) + 2]),
                np.concatenate([[u, u], cols]), np.concatenate([[-c, -c], -np.asarray(values)]),
                np.concatenate([[1.0, -1.0], right]))
    cones.append(clarabel.SecondOrderConeT(k + 2))


def signed_rows(term: Term) -> sp.csr_matrix:
    """The rows y_i x_i (n, d)."""
    return sp.csr_matrix(term.features.multiply(term.labels[:, None]))
