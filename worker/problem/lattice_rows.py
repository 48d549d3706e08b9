"""``{"type": "monotone_lattice", "shape": ..., "increasing": ...}`` → the orderings of the
lattice's monotonicity edges (rows by
:meth:`worker.problem.compiled.ConstraintSet.of_orderings`)."""

from __future__ import annotations

import math

import numpy as np

from worker.errors import SpecError
from worker.spec.models import MonotoneLatticeConstraint


def lattice_pairs(constraint: MonotoneLatticeConstraint, path: str, d: int) -> np.ndarray:
    """Orderings w_v <= w_(v + stride_k) for every edge along each increasing axis k, then
    w_(v + stride_k) <= w_v along each decreasing one: shape (k, 2), as
    :func:`worker.problem.ordering_rows.ordering_pairs`."""
    increasing = lattice_edges(constraint.shape, constraint.increasing, d, path)
    decreasing = lattice_edges(constraint.shape, constraint.decreasing, d, path)[:, ::-1]
    return np.concatenate([increasing, decreasing])


def declared_lattice_rows(constraint: MonotoneLatticeConstraint) -> tuple[int, int]:
    """(rows, nonzeros) the block compiles to, from the spec alone: one row of two entries
    per edge along each increasing or decreasing axis."""
    size = math.prod(constraint.shape)
    rows = sum(size // constraint.shape[axis] * (constraint.shape[axis] - 1)
               for axis in constraint.increasing + constraint.decreasing)
    return rows, 2 * rows


def lattice_edges(shape: list[int], increasing: list[int], d: int, path: str) -> np.ndarray:
    """Pairs (v, v + stride_k) of lattice vertices (C order) along each increasing axis k.

    Returns
    -------
    ndarray, shape (m, 2)
        For shape [2]*12 with all axes increasing, m = 12 * 2**11 = 24,576 (paper §6).
    """
    size = math.prod(shape)
    if size != d:
        raise SpecError.at(f"{path}.shape", f"the lattice has {size} vertices but the "
                           f"dimension is {d}; shape's product must equal the dimension")
    vertices = np.arange(size, dtype=np.int64).reshape(shape)
    edges = []
    for axis in sorted(increasing):
        low = np.take(vertices, np.arange(shape[axis] - 1), axis=axis).ravel()
        high = np.take(vertices, np.arange(1, shape[axis]), axis=axis).ravel()
        edges.append(np.column_stack([low, high]))
    return np.concatenate(edges) if edges else np.zeros((0, 2), dtype=np.int64)
