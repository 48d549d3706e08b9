"""What runs on one partition in SVRG OL's data-parallel rounds: functions of a partition's
:class:`~worker.kernels.svrg.Rows` (the tasks :mod:`worker.distributed.batch` submits), and
the fixed pairwise tree that combines their results, so the answer does not depend on
where the tasks ran."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import scipy.sparse as sp

from worker.kernels.partition_losses import loss_sums, selected_rows
from worker.kernels.svrg import Rows, gradient_sum
from worker.problem.compiled import Objective

T = TypeVar("T")


def partition_bounds(n: int, partition_rows: int) -> list[tuple[int, int]]:
    """Row ranges [start, stop) of at most ``partition_rows`` rows covering 0..n-1."""
    return [(start, min(start + partition_rows, n)) for start in range(0, n, partition_rows)]


def rows_of(objective: Objective, start: int, stop: int) -> Rows:
    """Rows start..stop-1 of the objective's examples (views of its arrays, rebased indptr)."""
    features = objective.features
    first, last = int(features.indptr[start]), int(features.indptr[stop])
    return Rows(kind=np.int64(objective.kind),
                indptr=(features.indptr[start:stop + 1] - first).astype(np.int64),
                indices=features.indices[first:last].astype(np.int64, copy=False),
                data=np.ascontiguousarray(features.data[first:last], dtype=np.float64),
                labels=np.ascontiguousarray(objective.labels[start:stop], dtype=np.float64),
                weights=np.ascontiguousarray(objective.example_weights()[start:stop]),
                first_row=np.int64(start))


#: A partition's batch result: (sum of loss gradients, shape (d,), row count, sum of losses).
PartialSum = tuple[np.ndarray, int, float]


def partial_sum(rows: Rows, anchor: np.ndarray, key: np.uint64, fraction: float) -> PartialSum:
    """(sum of the selected rows' loss gradients at the anchor, shape (d,), their count, the
    sum of their losses at the anchor)."""
    total = np.zeros(anchor.shape[0])
    count, losses = gradient_sum(rows, anchor, key, fraction, total)
    return total, int(count), float(losses)


def combine(left: PartialSum, right: PartialSum) -> PartialSum:
    """One node of the reduction tree: add two partial sums."""
    return left[0] + right[0], left[1] + right[1], left[2] + right[2]


def rows_matrix(rows: Rows, width: int) -> sp.csr_matrix:
    """A partition's rows as a CSR matrix (rows, width) over their arrays."""
    return sp.csr_matrix((rows.data, rows.indices, rows.indptr),
                         shape=(rows.labels.shape[0], width))


def sample_of(rows: Rows, key: np.uint64, fraction: float, forced: int) -> Rows:
    """The partition's rows selected for a serial phase (:func:`selected_rows`)."""
    return picked(rows, selected_rows(rows, key, fraction, forced))


def picked(rows: Rows, chosen: np.ndarray) -> Rows:
    """The partition's rows at local indices ``chosen`` (k,), as a block of their own."""
    matrix = sp.csr_matrix((rows.data, rows.indices, rows.indptr),
                           shape=(rows.labels.shape[0], int(rows.indices.max(initial=0)) + 1))
    chosen_rows = matrix[chosen]
    return rows._replace(indptr=chosen_rows.indptr.astype(np.int64),
                         indices=chosen_rows.indices.astype(np.int64), data=chosen_rows.data,
                         labels=rows.labels[chosen], weights=rows.weights[chosen],
                         first_row=np.int64(-1))


def concatenated(parts: Sequence[Rows]) -> Rows:
    """Row blocks stacked in order, as one CSR block."""
    ends = np.cumsum([int(p.indptr[-1]) for p in parts])
    starts = np.concatenate([[0], ends[:-1]])
    indptr = np.concatenate([[0]] + [p.indptr[1:] + s for p, s in zip(parts, starts,
                                                                        strict=True)])
    return parts[0]._replace(indptr=indptr.astype(np.int64),
                             indices=np.concatenate([p.indices for p in parts]),
                             data=np.concatenate([p.data for p in parts]),
                             labels=np.concatenate([p.labels for p in parts]),
                             weights=np.concatenate([p.weights for p in parts]),
                             first_row=np.int64(-1))


def partial_losses(rows: Rows, points: np.ndarray) -> np.ndarray:
    """sum_i c_i loss(x_i . w_k, y_i) over the partition, shape (K,) for points (K, d)."""
    out = np.zeros(points.shape[0])
    loss_sums(rows, points, out)
    return out


def add(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """One node of a reduction tree of arrays."""
    return left + right


def tree_reduce(items: list[T], pair: Callable[[T, T], T]) -> T:
    """Reduce level by level, pairing (0, 1), (2, 3), ...; an odd last item moves up as is."""
    level = list(items)
    while len(level) > 1:
        level = [pair(level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                 for k in range(0, len(level), 2)]
    return level[0]


def rows_in_task(rows: Rows) -> Rows:
    """A partition shipped inside its task (recomputable after a worker dies)."""
    return rows


def rows_nbytes(rows: Rows) -> int:
    """Bytes of a partition's arrays."""
    return int(rows.indptr.nbytes + rows.indices.nbytes + rows.data.nbytes + rows.labels.nbytes
               + rows.weights.nbytes)
