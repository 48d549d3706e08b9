"""What one data file may become once read: at most the per-job memory budget.

A small file can stand for far more memory than it occupies: a deflated npz of zeros, a
compressed parquet or feather column, a Matrix Market or npy header claiming a large shape.
Each reader works out, from headers, footers or a counting pass, the bytes its output will
hold and calls :func:`check_expansion` *before* it decompresses or allocates them; one file
over ``LIGHTTOUCH_MAX_JOB_BYTES`` could never fit in a job anyway. :func:`check_axes` keeps
every side a file declares within :data:`~worker.data.sizes.MAX_SIZE`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from worker.data.sizes import MAX_SIZE, gib
from worker.errors import DataError
from worker.settings import default_max_job_bytes

#: The budget of the files being read: set by whoever resolved the settings
#: (:func:`expansion_budget`), so readers keep their ``(stream, ref, path)`` signature.
_BUDGET: ContextVar[int | None] = ContextVar("expansion_budget", default=None)


@contextmanager
def expansion_budget(nbytes: int) -> Iterator[None]:
    """Within the block, :func:`check_expansion` refuses data over ``nbytes`` (outside any
    block: the default budget, half the machine's memory)."""
    token = _BUDGET.set(nbytes)
    try:
        yield
    finally:
        _BUDGET.reset(token)

#: Bytes of one value once read: every reader's output is float64.
FLOAT64_BYTES = 8


def check_expansion(nbytes: int, what: str, path: str) -> None:
    """Refuse data whose values would take more than the per-job memory budget.

    Parameters
    ----------
    nbytes : int
        Bytes the read values will hold (decompressed, allocated), worked out before reading.
    what : str
        The data as the message names it, e.g. ``"the npz archive"``.
    path : str
        JSON path of the reference, e.g. ``objective.data.features``.

    Raises
    ------
    DataError
        ``nbytes`` exceeds the budget of :func:`expansion_budget` (the job's
        ``LIGHTTOUCH_MAX_JOB_BYTES``).
    """
    budget = _BUDGET.get()
    if budget is None:
        budget = default_max_job_bytes()
    if nbytes > budget:
        raise DataError(path, f"{what} expands to {nbytes:,} bytes once read ({gib(nbytes)}), "
                              f"over the per-job memory budget of {budget:,} bytes "
                              f"({gib(budget)}); use smaller data, or ask the operator to "
                              f"raise LIGHTTOUCH_MAX_JOB_BYTES")


def check_axes(shape: Sequence[int], what: str, path: str) -> None:
    """Refuse a declared shape with a side past :data:`MAX_SIZE` (or below zero)."""
    for axis, side in enumerate(shape):
        if not 0 <= side <= MAX_SIZE:
            raise DataError(path, f"{what} declares shape {tuple(shape)}: axis {axis} has "
                                  f"{side:,} entries, outside 0..{MAX_SIZE:,} (the largest "
                                  f"dimension)")
