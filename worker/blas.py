"""One BLAS thread for the small dense products of a solve.

Q's positive-semidefiniteness check and L-BFGS-B's steps act on vectors of d and matrices of
a few thousand entries, where the BLAS threads' start-up costs more than the work: on a
loaded 2-core machine Q's check for d = 200 took 90-100 ms on the default two threads and
1.1 ms on one (8.4 s against 38 ms for d = 600), and L-BFGS-B on Adult (d = 125) 4.1 s
against 0.8 s. The queue's workers run one thread anyway (Dockerfile).
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    """This process's BLAS libraries, inspected once: ``threadpool_limits`` inspects every
    loaded library on each call (5-10 ms, more than a small L-BFGS-B solve takes)."""
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager:
    """A context in which this process's BLAS libraries run one thread."""
    return _controller().limit(limits=1, user_api="blas")
