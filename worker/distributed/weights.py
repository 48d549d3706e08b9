"""Example weights of examples read in partitions (pointwise examples in files, or the
rows of ``pairwise_hinge``'s tables): each partition's rows of the weights, read where the
partition is held, and their mean-one normalization agreed over every partition.

A weighted objective is (1/n) sum_i c_i loss_i with the weights c divided by their mean, as
:func:`worker.problem.weights.mean_one` puts them in one process: c_i = (w_i / M) (n / S),
M the largest weight and S the sum of w_i / M. Once every partition's first global row is
known (after the census; a pair plan's ranges), one more round reads each partition's
weights (rows [offset, offset + rows) of a 1-D ``npy`` file with ranged reads, as
:func:`worker.distributed.census.finish` reads a separate labels file; or the driver's slice
of inline values, sent with the task), checks them, and reports a :class:`Tally` over the
partition's rows as read (its examples, or its pairs' differences); the tallies are added
by the fixed pairwise tree, so M and S, and with them every partition's weights, do not
depend on where the tasks ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, TypeVar

import numpy as np

from worker.distributed.chunks import Chunk
from worker.distributed.executors import Executor
from worker.distributed.pairs import PairPlan
from worker.distributed.partitions import FEATURES, WEIGHTS, PartitionPlan, PlanWeights
from worker.distributed.ranges import vector_rows
from worker.distributed.tasks import tree_reduce
from worker.errors import DataError, SpecError
from worker.settings import DataSettings

#: A plan whose rows carry weights: pointwise examples' or pairs'.
Plan = TypeVar("Plan", PartitionPlan, PairPlan)


@dataclass(frozen=True)
class Tally:
    """A partition's (or a subtree's) weights summed on the scale of its largest weight.

    ``largest`` is M_p, the largest weight (0: every weight is 0), ``total`` the sum of
    w_i / M_p, ``columns`` (width,) the sum of w_i / M_p over the rows with x_ij != 0 for
    column j of the file's indices (the §8.1 inverse frequencies' counts).
    """

    largest: float
    total: float
    columns: np.ndarray

    def rescaled(self, largest: float) -> tuple[float, np.ndarray]:
        """(total, columns) on the scale of ``largest`` >= this tally's."""
        ratio = self.largest / largest if largest > 0 else 0.0
        return self.total * ratio, self.columns * ratio


class Scale(NamedTuple):
    """c_i = (w_i / largest) * factor: the weights of mean one over all n examples."""

    largest: float
    factor: float


def held_weights(plan: Plan) -> tuple[Plan, np.ndarray | None]:
    """The plan as tasks take it, without the inline weights (n,), whose slices go with the
    tasks that read them, and those weights (None: none inline).

    Raises
    ------
    SpecError
        A weights reference that cannot be read in row ranges, naming it and what to give
        instead.
    """
    if plan.weights is not None and plan.weight_npy is None:
        raise SpecError.at(WEIGHTS, f"examples read in partitions take their weights from a "
                           f"1-D .npy file (without sha256) read in each partition's rows, "
                           f"or from inline values; {plan.weights.uri} is "
                           f"{plan.weights.format}"
                           f"{' with sha256' if plan.weights.sha256 else ''}: save the "
                           f"weights with numpy.save as a 1-D array of one weight per row, "
                           f"or give them inline")
    if plan.weight_values is None:
        return plan, None
    return replace(plan, weight_values=None), plan.weight_values


def check_count(plan: PlanWeights, n: int, inline: np.ndarray | None,
                rows_of: str = FEATURES) -> None:
    """One weight per example (of the ``n`` rows of ``rows_of``) of the weights file or the
    ``inline`` weights: the SpecError at ``objective.data.weights`` naming both lengths
    otherwise."""
    given = plan.weight_npy.shape[0] if plan.weight_npy is not None else inline.shape[0]
    if given != n:
        where = f" in {plan.weights.uri}" if plan.weights is not None else ""
        raise SpecError.at(WEIGHTS, f"{given} weights{where} for {n} rows of {rows_of}; "
                                    f"give one weight per row")


def partition_weights(plan: Plan, offset: int, rows: int, settings: DataSettings,
                      values: np.ndarray | None = None) -> np.ndarray:
    """Rows [offset, offset + rows) of the weights, shape (rows,): ``values`` (the inline
    weights' slice), else read from the weights file; a DataError naming the first global
    row whose weight is negative or not finite."""
    if values is None:
        values = vector_rows(plan.weights, plan.weight_npy, WEIGHTS, plan.roots, offset, rows,
                             settings)
    weights = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(weights) | (weights < 0))
    if bad.size:
        where = f" of {plan.weights.uri}" if plan.weights is not None else ""
        raise DataError(WEIGHTS, f"row {offset + int(bad[0])}{where} has weight "
                                 f"{float(weights[bad[0]])!r}; give a finite number >= 0 "
                                 f"(0 leaves the example out)")
    return weights


def tally(chunk: Chunk, weights: np.ndarray) -> Tally:
    """A pointwise partition's :class:`Tally` of its weights (rows,) over its rows as read."""
    features = chunk.features
    return rows_tally(features.indptr, features.indices, features.shape[1], weights)


def rows_tally(indptr: np.ndarray, indices: np.ndarray, width: int,
               weights: np.ndarray) -> Tally:
    """The :class:`Tally` of ``weights`` (rows,) over CSR rows (``indptr`` (rows + 1,),
    column ``indices`` (nonzeros,) below ``width``)."""
    largest = float(weights.max(initial=0.0))
    if largest == 0:
        return Tally(0.0, 0.0, np.zeros(width))
    scaled = weights / largest
    columns = np.bincount(indices, weights=np.repeat(scaled, np.diff(indptr)),
                          minlength=width)
    return Tally(largest, float(scaled.sum()), columns)


def add_tallies(left: Tally, right: Tally) -> Tally:
    """One node of the reduction tree: both tallies on the scale of the larger weight."""
    largest = max(left.largest, right.largest)
    (left_total, left_columns), (right_total, right_columns) = \
        left.rescaled(largest), right.rescaled(largest)
    if left_columns.size < right_columns.size:
        left_columns, right_columns = right_columns, left_columns
    columns = left_columns.copy()
    columns[:right_columns.size] += right_columns
    return Tally(largest, left_total + right_total, columns)


def scale_of(total: Tally, n: int) -> Scale:
    """The normalization of every partition's weights; refused when every weight is 0."""
    if not total.largest > 0:
        raise SpecError.at(WEIGHTS, "every weight is 0; give at least one positive weight")
    return Scale(total.largest, n / total.total)


def normalized(weights: np.ndarray, scale: Scale) -> np.ndarray:
    """A partition's weights (rows,) divided by the mean weight over every example."""
    return (weights / scale.largest) * scale.factor


def weights_round(executor: Executor, plan: Plan, inline: np.ndarray | None, parts: list[Any],
                  spans: Sequence[tuple[int, int]], settings: DataSettings,
                  tallied: Callable[[Any, np.ndarray], Tally],
                  rows_of: str = FEATURES) -> tuple[np.ndarray, list[Any], int]:
    """Every partition's weights read and tallied (module docstring).

    ``parts`` are the handles of the read partitions, ``spans`` their (first global row,
    rows) in row order, ``tallied(part, weights)`` a partition's :class:`Tally`, and
    ``rows_of`` the JSON path whose rows the weights count (named when their number is
    wrong). Returns the weighted column counts (width,) over the partitions' column
    indices as read, the handles of each partition's weights (rows,) of mean one, and the
    bytes the round moved.
    """
    n = sum(rows for _, rows in spans)
    check_count(plan, n, inline, rows_of)
    raw = [executor.submit(partition_weights, plan, offset, rows, settings,
                           None if inline is None else inline[offset:offset + rows])
           for offset, rows in spans]
    root = tree_reduce([executor.submit(tallied, part, weights)
                        for part, weights in zip(parts, raw, strict=True)],
                       lambda a, b: executor.submit(add_tallies, a, b))
    (total,) = executor.gather([root], "reading the example weights")
    scale = scale_of(total, n)
    moved = total.columns.nbytes * max(1, len(parts) - 1) \
        + (0 if inline is None else inline.nbytes)
    return total.columns * scale.factor, \
        [executor.submit(normalized, part, scale) for part in raw], executor.moved(moved)
