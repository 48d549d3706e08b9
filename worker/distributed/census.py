"""The census round over a plan's partitions, and a read partition made into the batch
kernels' rows.

Every partition reports its row count, width, rows of a nonzero label, and the first row
that breaks a rule (:func:`census_of`); the driver turns them into offsets, the index base
and the width d, and raises errors that name the global row, or a calibrated model's label
column whose ``positive`` values label no row of any partition (:func:`settle`).
:func:`finish` then gives a partition's :class:`~worker.kernels.svrg.Rows`, reading its
labels from a separate 1-D ``npy`` file once the census has fixed its offset. Rows keep
the file's order: global row = partition offset + local row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from worker.data.formats import REGISTRY
from worker.data.labels import LABELS, label_kind, label_problem, raise_problem, signed_labels
from worker.distributed.chunks import Chunk
from worker.distributed.partitions import FEATURES, LABEL, PartitionPlan
from worker.distributed.ranges import vector_rows
from worker.errors import SpecError
from worker.kernels.svrg import Rows
from worker.settings import DataSettings
from worker.spec.tables import LabelColumn
from worker.tables.lower import no_positive_row


@dataclass(frozen=True)
class Census:
    """What one partition reports in the census round.

    ``first_zero`` / ``widest`` are local rows of the first entry with index 0 and of the
    largest index (-1: none); ``problem`` is (local row, error class, path, message) of the
    first bad value, path and message formatted with ``row=<global row>``; ``labelled`` the
    rows whose label the partition carries is not 0 (a label column's positive values read
    as 1; 0 when the labels are in a separate file).
    """

    rows: int
    width: int
    first_zero: int
    widest: int
    problem: tuple[int, str, str, str] | None
    labelled: int = 0


@dataclass(frozen=True)
class Settled:
    """The census's outcome: n, partition offsets (P,), index base (0 or 1), width d."""

    n: int
    offsets: tuple[int, ...]
    base: int
    width: int


def census_of(chunk: Chunk, loss: str) -> Census:
    """One partition's counts and its first bad value (module docstring)."""
    features, labels = chunk.features, chunk.labels
    if chunk.problem is not None:
        return Census(rows=0, width=0, first_zero=-1, widest=-1, problem=chunk.problem)
    indices = features.indices
    first_zero = _row_of(features, int(np.argmax(indices == 0))) \
        if indices.size and indices.min() == 0 else -1
    widest = _row_of(features, int(np.argmax(indices))) if indices.size else -1
    problem = None
    bad = np.flatnonzero(~np.isfinite(features.data))
    if bad.size:
        k = int(bad[0])
        problem = (_row_of(features, k), "data", FEATURES,
                   f"row {{row}} column {indices[k]} is {features.data[k]}; every value must "
                   f"be finite: replace or drop NaN and infinite entries")
    elif labels is not None:
        problem = label_problem(labels, label_kind(loss), FEATURES)
    return Census(rows=features.shape[0], width=features.shape[1], first_zero=first_zero,
                  widest=widest, problem=problem,
                  labelled=0 if labels is None else int(np.count_nonzero(labels)))


def column_counts(chunk: Chunk) -> np.ndarray:
    """#{i : x_ij != 0} per column j of the file's indices, shape (width,)."""
    return np.bincount(chunk.features.indices, minlength=chunk.features.shape[1])


def add_counts(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Sum two count vectors of possibly different lengths."""
    if left.size < right.size:
        left, right = right, left
    total = left.copy()
    total[:right.size] += right
    return total


def settle(plan: PartitionPlan, censuses: Sequence[Census]) -> Settled:
    """Offsets, index base and width from every partition's census; the first problem in
    file order raised with its global row, then a label column (``plan.label``) whose
    positive values label no row, as the in-memory lowering refuses it
    (:func:`~worker.tables.lower.table_labels`)."""
    offsets = np.concatenate([[0], np.cumsum([c.rows for c in censuses], dtype=np.int64)])
    for offset, census in zip(offsets, censuses, strict=False):
        if census.problem is not None:
            raise_problem(census.problem, int(offset) + census.problem[0])
    n = int(offsets[-1])
    if n == 0:
        raise SpecError.at(FEATURES, "no examples; give at least one row")
    if isinstance(plan.label, LabelColumn) and not any(c.labelled for c in censuses):
        raise no_positive_row(plan.label, LABEL)
    if plan.label_npy is not None and plan.label_npy.shape[0] != n:
        raise SpecError.at(LABELS, f"{plan.label_npy.shape[0]} labels for {n} feature rows; "
                                   f"give one label per row")
    zeros = [int(o) + c.first_zero for o, c in zip(offsets, censuses, strict=False)
             if c.first_zero >= 0]
    k = max(range(len(censuses)), key=lambda p: (censuses[p].width, -p))
    settle_columns = REGISTRY[plan.features.format].partitions.settle_columns
    base, width = settle_columns(plan.features, zeros[0] if zeros else None,
                                 censuses[k].width, int(offsets[k]) + censuses[k].widest,
                                 FEATURES)
    return Settled(n, tuple(int(o) for o in offsets[:-1]), base, width)


def shifted_counts(raw: np.ndarray, settled: Settled) -> np.ndarray:
    """Per-column sums over the file's indices as the zero-based columns (width,)."""
    counts = np.zeros(settled.width, dtype=raw.dtype)
    shifted = raw[settled.base:settled.base + settled.width]
    counts[:shifted.size] = shifted
    return counts


def finish(plan: PartitionPlan, chunk: Chunk, offset: int, base: int,
           settings: DataSettings, weights: np.ndarray | None = None) -> Rows:
    """A read partition as the batch kernels' rows: zero-based indices, labels checked and
    0 read as -1 for hinge and logistic, ``first_row`` = ``offset``, and its ``weights``
    (rows,) of mean one over every example (None: every weight 1;
    :mod:`worker.distributed.weights`)."""
    features, labels = chunk.features, chunk.labels
    if labels is None:
        labels = _label_rows(plan, offset, features.shape[0], settings)
    return Rows(kind=np.int64(plan.kind), indptr=features.indptr.astype(np.int64),
                indices=features.indices.astype(np.int64) - base,
                data=np.ascontiguousarray(features.data, dtype=np.float64),
                labels=np.ascontiguousarray(signed_labels(labels, label_kind(plan.loss)),
                                            dtype=np.float64),
                weights=np.ones(features.shape[0]) if weights is None else weights,
                first_row=np.int64(offset))


def _label_rows(plan: PartitionPlan, offset: int, rows: int,
                settings: DataSettings) -> np.ndarray:
    """Rows [offset, offset + rows) of the separate labels file, checked."""
    labels = vector_rows(plan.labels, plan.label_npy, LABELS, plan.roots, offset, rows,
                         settings).astype(np.float64)
    problem = label_problem(labels, label_kind(plan.loss), LABELS)
    if problem is not None:
        raise_problem(problem, offset + problem[0])
    return labels


def _row_of(features: sp.csr_matrix, position: int) -> int:
    """The row holding the entry at ``position`` of the data array."""
    return int(np.searchsorted(features.indptr, position, side="right")) - 1
