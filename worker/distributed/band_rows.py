"""A hinge objective's rows y_i x_i left in a batch's partitions, read as the certified lower
bound and the trust-region polish read rows (the interface of
:class:`worker.candidates.hinge_lp.SignedRows`: ``shape``, ``weights``, ``margins``,
``reach``, ``transpose_dot``, ``mass``, ``take``), each by one map-reduce over the partitions.

The driver then holds vectors of one number per example (the margins z_i = y_i x_i . w: the
bound's dual certificate weighs every example by its margin, and the polish keeps the
examples nearest their kink; |x_i|_1; the example weights c_i), and the rows of the band
the LP keeps, never the examples' rows.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.distributed.batch import PartitionedBatch
from worker.distributed.tasks import add, rows_matrix, tree_reduce
from worker.kernels.svrg import Rows


def part_margins(rows: Rows, w: np.ndarray) -> np.ndarray:
    """y_i x_i . w over the partition, shape (rows,)."""
    return rows.labels * (rows_matrix(rows, w.shape[0]) @ w)


def part_weighted_sum(rows: Rows, weights: np.ndarray, width: int) -> np.ndarray:
    """sum_i c_i weights_i y_i x_i over the partition (c its example weights), shape
    (width,)."""
    return rows_matrix(rows, width).T @ (rows.labels * rows.weights * weights)


def part_reach(rows: Rows) -> np.ndarray:
    """|x_i|_1 over the partition, shape (rows,)."""
    count = rows.labels.shape[0]
    return np.bincount(np.repeat(np.arange(count), np.diff(rows.indptr)),
                       weights=np.abs(rows.data), minlength=count)


def part_weights(rows: Rows) -> np.ndarray:
    """The partition's example weights c_i, shape (rows,)."""
    return rows.weights


def part_take(rows: Rows, local: np.ndarray, width: int) -> sp.csr_matrix:
    """The partition's rows y_i x_i at ``local`` indices, shape (k, width)."""
    picked = rows_matrix(rows, width)[local]
    return sp.csr_matrix(picked.multiply(rows.labels[local][:, None]))


class PartitionedRows:
    """The signed rows (n, d) of ``batch``'s partitions (module docstring); every call is one
    round, counted with the batch's objective values."""

    def __init__(self, batch: PartitionedBatch) -> None:
        self.batch = batch
        self.shape = (batch.n, batch.d)
        self.ends: np.ndarray | None = None
        self._weights: np.ndarray | None = None

    def margins(self, w: np.ndarray) -> np.ndarray:
        """z_i = y_i x_i . w, shape (n,)."""
        run = self.batch.executor
        shared = run.share(np.ascontiguousarray(w, dtype=np.float64), "margins")
        parts = run.gather([run.submit(part_margins, part, shared) for part in self.batch.parts],
                           "the lower bound's margins")
        self.ends = np.cumsum([p.size for p in parts])
        self.batch.count_values(w.nbytes * max(self.batch.workers, 1) + 8 * self.shape[0])
        return np.concatenate(parts)

    @property
    def weights(self) -> np.ndarray:
        """The example weights c (n,) of mean one (all 1 without weights), gathered once."""
        if self._weights is None:
            self._weights = self._gathered(part_weights, "the examples' weights")
        return self._weights

    def reach(self) -> np.ndarray:
        """|x_i|_1 (n,): how far a margin moves per unit of |w - w'|_inf."""
        return self._gathered(part_reach, "the polish's row norms")

    def mass(self, weights: np.ndarray) -> float:
        """sum_i c_i weights_i for ``weights`` (n,)."""
        return float(self.weights @ weights)

    def transpose_dot(self, weights: np.ndarray) -> np.ndarray:
        """sum_i weights_i y_i x_i, shape (d,), for ``weights`` (n,)."""
        run, d = self.batch.executor, self.shape[1]
        pieces = np.split(np.asarray(weights, dtype=np.float64), self._ends()[:-1])
        root = tree_reduce([run.submit(part_weighted_sum, part, piece, d)
                            for part, piece in zip(self.batch.parts, pieces, strict=True)],
                           lambda a, b: run.submit(add, a, b))
        (total,) = run.gather([root], "the lower bound's weighted sum")
        self.batch.count_values(8 * self.shape[0] + 8 * d * (2 * len(pieces) - 1))
        return total

    def take(self, kept: np.ndarray) -> sp.csr_matrix:
        """The rows y_i x_i of the examples ``kept`` (k,), sorted, shape (k, d)."""
        run, d, ends = self.batch.executor, self.shape[1], self._ends()
        starts = np.concatenate([[0], ends[:-1]])
        handles = [run.submit(part_take, part, kept[(kept >= a) & (kept < b)] - a, d)
                   for part, a, b in zip(self.batch.parts, starts, ends, strict=True)]
        blocks = run.gather(handles, "the lower bound's band rows")
        taken = sp.vstack(blocks, format="csr")
        self.batch.count_values(8 * kept.size + 12 * taken.nnz)
        return taken

    def _gathered(self, task, what: str) -> np.ndarray:
        """One number per example from every partition (``task(rows)``), in row order."""
        run = self.batch.executor
        parts = run.gather([run.submit(task, part) for part in self.batch.parts], what)
        self.batch.count_values(8 * self.shape[0])
        return np.concatenate(parts)

    def _ends(self) -> np.ndarray:
        """The partitions' end rows (known after the first :meth:`margins`)."""
        if self.ends is None:
            self.margins(np.zeros(self.shape[1]))
        return self.ends
