"""Each loss's part of the exact methods' programs: one :class:`LossForm` per loss with a conic
form, named by its record's :attr:`worker.losses.ConicForm.form`.

A form answers for its loss in the program of one objective (:mod:`.conic_form`: its loss
variables per example, its rows and its blocks of P) and in a robust epigraph
(:mod:`.robust_form`: its variables, its coefficients in the term's epigraph row and its own
rows). The tables of both modules' docstrings say what each loss adds.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.algorithms.exact.conic_form import Blocks, exponential_rows
from worker.algorithms.exact.robust_form import Rows, signed_rows, square_cone
from worker.problem.compiled import CompiledProblem
from worker.problem.network import Term

#: P's block on w (d, d), P's diagonal on the loss variables, the objective's constant.
ProgramPart = tuple[sp.spmatrix, np.ndarray, float]


class LossForm:
    """One loss in the exact programs (module docstring); the hinge's by default."""

    #: loss variables per example in the program of one objective
    program_variables = 1

    def program(self, problem: CompiledProblem, blocks: Blocks,
                q: np.ndarray) -> ProgramPart:
        """Fill q with the loss's part, add its rows to ``blocks``; P's parts and constant."""
        raise NotImplementedError

    def epigraph_variables(self, n: int) -> int:
        """The term's own variables in a robust epigraph, for n examples."""
        return n

    def epigraph_part(self, term: Term, start: int) -> tuple[list, list]:
        """The columns and coefficients of the term's loss in its epigraph row: c_i / n for
        the example weights c of mean 1."""
        return list(range(start, start + term.n)), list(term.example_weights() / term.n)

    def epigraph_rows(self, term: Term, start: int, linear: Rows, seconds: Rows,
                      cones: list) -> int | None:
        """Add the term's own rows; the first margin row of a hinge term, else None."""
        raise NotImplementedError


def _margin_rows(problem: CompiledProblem) -> tuple[sp.csr_matrix, ...]:
    """The rows y_i x_i (n, d) and the identity on the loss variables (n, n)."""
    objective = problem.objective
    signed = sp.csr_matrix(objective.features.multiply(objective.labels[:, None]))
    return signed, sp.identity(objective.n, format="csr")


def _epigraph_margins(term: Term, start: int, linear: Rows) -> int:
    """-y_i x_i . w - xi_i <= -1 for every example; their first row."""
    n, examples = term.n, np.arange(term.n)
    margins = signed_rows(term).tocoo()
    return linear.add(np.concatenate([margins.row, examples]),
                      np.concatenate([margins.col, start + examples]),
                      np.concatenate([-margins.data, -np.ones(n)]), -np.ones(n))


def _weights(problem: CompiledProblem) -> np.ndarray:
    """The example weights c (n,) of mean 1 (ones without weights): every form's loss
    variables carry c_i / n where the unweighted program has 1/n."""
    return problem.objective.example_weights()


class _Hinge(LossForm):
    """xi (n,), q_xi = c/n, -y_i x_i . w - xi_i <= -1 and -xi_i <= 0 (an LP)."""

    def program(self, problem, blocks, q):
        d, n = problem.d, problem.objective.n
        signed, loss = _margin_rows(problem)
        q[d:d + n] = _weights(problem) / n
        blocks.inequality(sp.hstack([-signed, -loss]), -np.ones(n))
        blocks.inequality(sp.hstack([sp.csr_matrix((n, d)), -loss]), np.zeros(n))
        return sp.csr_matrix((d, d)), np.zeros(n), 0.0

    def epigraph_rows(self, term, start, linear, seconds, cones):
        first = _epigraph_margins(term, start, linear)
        n, examples = term.n, np.arange(term.n)
        linear.add(examples, start + examples, -np.ones(n), np.zeros(n))
        return first


class _SquaredHinge(LossForm):
    """xi (n,), P_xixi = diag(2c/n), -y_i x_i . w - xi_i <= -1; in the epigraph also r with
    sum_i c_i xi_i^2 <= n r."""

    def program(self, problem, blocks, q):
        d, n = problem.d, problem.objective.n
        signed, loss = _margin_rows(problem)
        blocks.inequality(sp.hstack([-signed, -loss]), -np.ones(n))
        return sp.csr_matrix((d, d)), 2.0 * _weights(problem) / n, 0.0

    def epigraph_variables(self, n):
        return n + 1

    def epigraph_part(self, term, start):
        return [start + term.n], [1.0]

    def epigraph_rows(self, term, start, linear, seconds, cones):
        _epigraph_margins(term, start, linear)
        n, examples = term.n, np.arange(term.n)
        square_cone(seconds, cones, start + n, float(n), examples, start + examples,
                    2.0 * np.sqrt(term.example_weights()), np.zeros(n))
        return None


class _Squared(LossForm):
    """The Gram form P_ww = X'CX / n, q_w = -X'Cy / n, constant y'Cy / (2n) (C = diag(c));
    in the epigraph r with ||C^(1/2) (X w - y)||^2 <= 2 n r."""

    program_variables = 0

    def program(self, problem, blocks, q):
        objective, d = problem.objective, problem.d
        features, labels, n = objective.features, objective.labels, objective.n
        weights = _weights(problem)
        weighted = sp.csr_matrix(features.multiply(weights[:, None]))
        q[:d] = -(weighted.T @ labels) / n
        return (sp.csr_matrix(weighted.T @ features) / n, np.zeros(0),
                float(labels @ (weights * labels)) / (2 * n))

    def epigraph_variables(self, n):
        return 1

    def epigraph_part(self, term, start):
        return [start], [1.0]

    def epigraph_rows(self, term, start, linear, seconds, cones):
        x = term.features.tocoo()
        roots = np.sqrt(term.example_weights())
        square_cone(seconds, cones, start, 2.0 * term.n, x.row, x.col,
                    2.0 * roots[x.row] * x.data, -2.0 * roots * term.labels)
        return None


class _Logistic(LossForm):
    """t, a, e (n each), q_t = c/n, a_i + e_i <= 1 and the exponential cones of
    :func:`~worker.algorithms.exact.conic_form.exponential_rows`."""

    program_variables = 3

    def program(self, problem, blocks, q):
        d, n = problem.d, problem.objective.n
        signed, loss = _margin_rows(problem)
        q[d:d + n] = _weights(problem) / n
        blocks.inequality(sp.hstack([sp.csr_matrix((n, d + n)), loss, loss]), np.ones(n))
        blocks.cone_rows = exponential_rows(signed, d, blocks.columns)
        return sp.csr_matrix((d, d)), np.zeros(3 * n), 0.0

    def epigraph_variables(self, n):
        return 3 * n

    def epigraph_rows(self, term, start, linear, seconds, cones):
        n, examples = term.n, np.arange(term.n)
        linear.add(np.tile(examples, 2), np.concatenate([start + n + examples,
                                                         start + 2 * n + examples]),
                   np.ones(2 * n), np.ones(n))
        return None


HINGE, SQUARED_HINGE, SQUARED, LOGISTIC = _Hinge(), _SquaredHinge(), _Squared(), _Logistic()
