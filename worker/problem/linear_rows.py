"""``{"type": "linear", "A": ..., "b": ...}`` → the unit-norm rows of A w <= b."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.errors import SpecError
from worker.problem.csr import as_csr
from worker.spec.models import LinearConstraint


def linear_rows(constraint: LinearConstraint, path: str, d: int, source,
                notes: list[str]) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows a_r / ||a_r|| and rhs b_r / ||a_r||; all-zero rows are dropped (with a note)
    when ``b_r >= 0`` and refused otherwise.

    Parameters
    ----------
    constraint : LinearConstraint
    path : str
        The block's JSON path (``constraints[k]``), for errors and notes.
    d : int
        The dimension.
    source : worker.problem.compile.DataSource
        Reads ``A`` and ``b``.
    notes : list of str
        Appended to when rows are dropped.

    Returns
    -------
    rows : scipy.sparse.csr_matrix, shape (m_k, d)
    rhs : ndarray, shape (m_k,)
    """
    a = as_csr(source.matrix(constraint.A, f"{path}.A"))
    b = source.vector(constraint.b, f"{path}.b")
    if a.shape[1] != d:
        raise SpecError.at(f"{path}.A", f"A has {a.shape[1]} columns; dimension is {d}")
    if b.shape[0] != a.shape[0]:
        raise SpecError.at(f"{path}.b", f"length {b.shape[0]} does not match A's "
                           f"{a.shape[0]} rows")
    norms = np.sqrt(np.asarray(a.multiply(a).sum(axis=1)).ravel())
    zero = norms == 0
    impossible = np.flatnonzero(zero & (b < 0))
    if impossible.size:
        r = int(impossible[0])
        raise SpecError.at(f"{path}.A", f"row {r} is all zeros but b[{r}] = {b[r]} < 0: "
                           "0 <= b can never hold; remove the row or fix b")
    if zero.any():
        notes.append(f"{path}: dropped {int(zero.sum())} all-zero rows of A (b >= 0, "
                     "always satisfied)")
    keep = np.flatnonzero(~zero)
    scale = sp.diags(1.0 / norms[keep])
    return as_csr(scale @ a[keep]), b[keep] / norms[keep]
