"""One BLAS thread for the small dense products of a solve.

Q's positive-semidefiniteness check and L-BFGS-B's steps act on vectors of d and matrices of
a few thousand entries, where the BLAS threads' start-up costs more than the work (measured:
docs/benchmarks.md#fixed-costs-measured); the least squares of ``gamma: "auto"``'s fits take
LSMR's norms of vectors of a hundred thousand entries, where two threads on a busy machine
took three times as long as one (docs/guarantees.md#the-time-split-each-stage-until-it-slows).
The queue's workers run one thread anyway (Dockerfile).
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    """This process's BLAS libraries, inspected once: ``threadpool_limits`` inspects every
    loaded library on each call, which costs more than a small L-BFGS-B solve (measured:
    docs/benchmarks.md#fixed-costs-measured)."""
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager:
    """A context in which this process's BLAS libraries run one thread."""
    return _controller().limit(limits=1, user_api="blas")
