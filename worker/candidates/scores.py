"""Scoring candidates on the full objective and on every constraint, for the shrinking LP.

Rate constraints (:mod:`worker.problem.rates`) are scored by their true indicator rates,
after the m linear constraints (their column indices start at m). Objective values come from
the kernel arrays' rows, or from ``values`` when the examples are held elsewhere (SVRG OL on
partitions: :meth:`worker.distributed.batch.PartitionedBatch.values`, one round for all
points).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from worker.kernels.constraints import constraint_values
from worker.kernels.layout import ProblemArrays
from worker.kernels.objective import objective_value
from worker.problem.compiled import CompiledProblem, ConstraintSet

#: f at each of K points: (K, d) -> (K,).
ObjectiveValues = Callable[[np.ndarray], np.ndarray]

#: Values (candidates x rows) of one block of constraint rows scored at once
#: (:func:`_violated_by_rows`): 8 MiB, so m = 10^6 rows never make a (T, m) matrix.
BLOCK_VALUES = 2**20


@dataclass(frozen=True)
class CandidateScores:
    """Every candidate scored: objectives (C,), the constraint columns (C, k) the shrinking
    LP keeps <= 0 in expectation, each candidate's reported max violation (C,), and, where
    the scoring drops the columns no candidate violates, how many it kept.

    Constraints no candidate violates are left out: they cannot bind in the shrinking LP, so
    m = 10^6 constraints cost one pass, not a (C, m) matrix.
    """

    objectives: np.ndarray
    violations: np.ndarray
    max_violations: np.ndarray
    violated_columns: int | None = None


def score_candidates(arrays: ProblemArrays, problem: CompiledProblem, solutions: np.ndarray,
                     values: ObjectiveValues | None = None) -> CandidateScores:
    """Evaluate f and every g_i at each candidate (solutions shape (T, d))."""
    objectives = (values or on_rows(arrays))(solutions)
    if 1 <= arrays.a_width <= 2:    # rows of one or two entries, which the kernel reads
        columns, violations, max_violations = _violated_by_kernel(arrays, problem.constraints,
                                                                  solutions)
    else:
        columns, violations, max_violations = _violated_by_rows(problem.constraints, solutions)
    if problem.rates is not None:
        rates = problem.rates.values(solutions)
        np.maximum(max_violations, rates.max(axis=1, initial=0.0), out=max_violations)
        hit = np.flatnonzero(rates.max(axis=0) > 0)
        columns = np.concatenate([columns, problem.m + hit])
        violations = np.hstack([violations, rates[:, hit]])
    return CandidateScores(objectives, violations, max_violations, int(columns.size))


def _violated_by_kernel(arrays: ProblemArrays, constraints: ConstraintSet,
                        solutions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The violated columns, their values (T, k) and each candidate's largest violation, for
    rows of at most two entries (orderings, lattices, bounds on pairs): the kernel finds the
    columns, a pass of one or two reads a row per candidate, cheaper than a product of every
    row with every candidate; the CSR rows then give the values of those columns alone, as
    for every other layout (the kernel's difference rows ``c (w_a - w_b)`` may differ from
    the CSR's ``c w_a - c w_b`` in the last bit)."""
    count = solutions.shape[0]
    worst = np.full(constraints.m, -np.inf)
    row = np.empty(constraints.m)
    max_violations = np.zeros(count)
    for c in range(count):
        constraint_values(arrays, solutions[c], row)
        np.maximum(worst, row, out=worst)
        max_violations[c] = max(0.0, row.max(initial=0.0))
    columns = np.flatnonzero(worst > 0)
    sub = constraints.matrix[columns]
    violations = np.asarray((sub @ solutions.T).T - constraints.rhs[columns])
    return columns, violations.reshape(count, columns.size), max_violations


def _violated_by_rows(constraints: ConstraintSet, solutions: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_violated_by_kernel` for longer rows, each value computed once: the CSR product
    of each block of rows with every candidate (the kernel's sums, in the same order, to the
    bit, but reading each row once, not once per candidate), keeping the rows some candidate
    violates. A block holds about :data:`BLOCK_VALUES` values."""
    count = solutions.shape[0]
    step = max(1, BLOCK_VALUES // max(count, 1))
    points = np.ascontiguousarray(solutions.T)
    max_violations = np.zeros(count)
    columns, kept = [], []
    for start in range(0, constraints.m, step):
        block = constraints.matrix[start:start + step] @ points \
            - constraints.rhs[start:start + step, None]
        np.maximum(max_violations, block.max(axis=0, initial=0.0), out=max_violations)
        hit = np.flatnonzero(block.max(axis=1, initial=-np.inf) > 0)
        columns.append(start + hit)
        kept.append(block[hit])
    if not kept:
        return np.zeros(0, dtype=np.int64), np.zeros((count, 0)), max_violations
    return np.concatenate(columns), np.concatenate(kept).T, max_violations


def evaluate_point(arrays: ProblemArrays, problem: CompiledProblem, w: np.ndarray,
                   values: ObjectiveValues | None = None) -> tuple[float, float]:
    """(f(w), max(0, max_i g_i(w), box violation)) for one point w of shape (d,)."""
    violations = problem.constraints.values(w)
    if problem.rates is not None:
        violations = np.concatenate([violations, problem.rates.values(w)])
    box = max(float(np.max(problem.lower - w, initial=0.0)),
              float(np.max(w - problem.upper, initial=0.0)))
    objective = float((values or on_rows(arrays))(w[None, :])[0])
    return objective, max(0.0, float(violations.max(initial=0.0)), box)


def on_rows(arrays: ProblemArrays) -> ObjectiveValues:
    """f over the kernel arrays' own rows."""
    return lambda points: np.array([objective_value(arrays, w) for w in points])


def remembered(values: ObjectiveValues) -> ObjectiveValues:
    """``values`` that evaluates each distinct point once: a one-answer method's candidate,
    the mixture's mean and its projection are often the same point, each a pass over the
    rows (or a round over partitions). Points not seen before go to ``values`` together."""
    known: dict[bytes, float] = {}

    def evaluate(points: np.ndarray) -> np.ndarray:
        keys = [point.tobytes() for point in points]
        fresh = [k for k, key in enumerate(keys) if key not in known]
        if fresh:
            for k, value in zip(fresh, values(points[fresh]), strict=True):
                known[keys[k]] = float(value)
        return np.array([known[key] for key in keys])
    return evaluate
