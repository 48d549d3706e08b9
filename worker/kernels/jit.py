"""How the allocation-free kernels are compiled: ``@kernel`` and ``@kernel(inline="always")``.

The kernels take their arrays in namedtuple bundles (:mod:`worker.kernels.layout`). numba's
runtime counts references to every array taken out of a bundle, and its pruning pass does not
remove the counts across nested calls: on the lattice problem of ``bench/iteration_bench.py``
the atomic increments and decrements made one example's subgradient cost several times the
arithmetic (measured: docs/algorithms.md, "Fast iterations"). The kernels here allocate
nothing (their callers allocate every array), so they are compiled without the runtime and
count nothing. A kernel that must allocate uses ``njit``.
"""

from __future__ import annotations

from functools import partial

from numba import njit

#: numba.njit for a kernel that allocates no array: cached, compiled without reference counts.
kernel = partial(njit, cache=True, _nrt=False)
