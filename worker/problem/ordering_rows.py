"""``{"type": "ordering", "pairs" or "chain": ...}`` → rows (e_i - e_j)/sqrt(2) . w <= 0,
meaning w_i <= w_j (the row form :mod:`worker.projection` recognises as an order)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from worker.errors import SpecError
from worker.problem.csr import as_csr
from worker.spec.models import OrderingConstraint

_SQRT_HALF = math.sqrt(0.5)


def ordering_rows(constraint: OrderingConstraint, path: str, d: int, source,
                  notes: list[str]) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows of ``pairs``, or of the consecutive pairs of a ``chain``.

    Parameters and returns as :func:`worker.problem.linear_rows.linear_rows` (``source`` and
    ``notes`` are not used: the block is inline).
    """
    if constraint.pairs is not None:
        pairs = np.array(constraint.pairs, dtype=np.int64).reshape(-1, 2)
        check_indices(pairs, f"{path}.pairs", d, pair=True)
    else:
        chain = np.array(constraint.chain, dtype=np.int64)
        check_indices(chain, f"{path}.chain", d, pair=False)
        pairs = np.column_stack([chain[:-1], chain[1:]])
    return order_rows(pairs, d)


def declared_ordering_rows(constraint: OrderingConstraint) -> tuple[int, int]:
    """(rows, nonzeros) the block compiles to, from the spec alone: one row of two entries
    per pair or per consecutive pair of the chain."""
    rows = len(constraint.pairs) if constraint.pairs is not None \
        else max(len(constraint.chain or ()) - 1, 0)
    return rows, 2 * rows


def check_indices(indices: np.ndarray, path: str, d: int, pair: bool) -> None:
    """Refuse indices outside 0..d-1, a pair (rows of ``indices``, shape (k, 2)) of one
    index twice, or a chain (``indices`` shape (k,)) that visits an index twice."""
    flat = indices.ravel()
    bad = np.flatnonzero((flat < 0) | (flat >= d))
    if bad.size:
        k = int(bad[0])
        where = f"{path}[{k // 2}][{k % 2}]" if pair else f"{path}[{k}]"
        raise SpecError.at(where, f"index {flat[k]} is out of range for dimension {d} "
                           f"(valid: 0..{d - 1})")
    if pair:
        same = np.flatnonzero(indices[:, 0] == indices[:, 1])
        if same.size:
            raise SpecError.at(f"{path}[{int(same[0])}]", "a pair needs two different indices")
    elif len(np.unique(flat)) != flat.size:
        raise SpecError.at(path, "a chain visits an index twice; orderings would be cyclic")


def order_rows(pairs: np.ndarray, d: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows (e_i - e_j)/sqrt(2), CSR shape (m, d), and rhs zeros (m,), for ``pairs`` of
    shape (m, 2) whose rows (i, j) mean w_i <= w_j."""
    m = pairs.shape[0]
    rows = np.repeat(np.arange(m), 2)
    data = np.tile([_SQRT_HALF, -_SQRT_HALF], m)
    matrix = sp.csr_matrix((data, (rows, pairs.ravel())), shape=(m, d))
    return as_csr(matrix), np.zeros(m)
