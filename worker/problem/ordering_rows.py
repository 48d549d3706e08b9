"""``{"type": "ordering", "pairs" or "chain": ...}`` → the orderings w_i <= w_j it declares;
:meth:`worker.problem.compiled.ConstraintSet.of_orderings` makes them the rows
(e_i - e_j)/sqrt(2) . w <= 0 and keeps them for the isotonic path of
:mod:`worker.projection`."""

from __future__ import annotations

import numpy as np

from worker.errors import SpecError
from worker.spec.models import OrderingConstraint


def ordering_pairs(constraint: OrderingConstraint, path: str, d: int) -> np.ndarray:
    """The ``pairs``, or the consecutive pairs of a ``chain``: shape (k, 2), row (i, j)
    meaning w_i <= w_j; indices checked against the dimension ``d`` (errors at ``path``)."""
    if constraint.pairs is not None:
        pairs = np.array(constraint.pairs, dtype=np.int64).reshape(-1, 2)
        check_indices(pairs, f"{path}.pairs", d, pair=True)
    else:
        chain = np.array(constraint.chain, dtype=np.int64)
        check_indices(chain, f"{path}.chain", d, pair=False)
        pairs = np.column_stack([chain[:-1], chain[1:]])
    return pairs


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

