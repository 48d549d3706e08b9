"""How the allocation-free kernels are compiled: ``@kernel`` and ``@kernel(inline="always")``.

The kernels take their arrays in namedtuple bundles (:mod:`worker.kernels.layout`). numba's
runtime counts references to every array taken out of a bundle, and its pruning pass does not
remove the counts across nested calls: on the lattice problem of ``bench/iteration_bench.py``
the atomic increments and decrements made one example's subgradient cost several times the
arithmetic (measured: docs/algorithms.md, "Fast iterations"). The kernels here allocate
nothing (their callers allocate every array), so they are compiled without the runtime and
count nothing. A kernel that must allocate uses ``njit``.

A call from one compiled function to another that is not inlined passes each bundle by
value, every array as its seven fields (data pointer, shape, strides, ...), and LLVM copies
them all on the stack for the call: hundreds of words per bundle, for every call of every
iteration. So the kernels a loop calls once per iteration (LightTouch's, SVRG OL's serial
steps) are ``inline="always"``: numba splices them into the loop and the bundles are read
in place; measured in docs/benchmarks.md#iterations-per-second. A kernel called once per
chunk or on a rare path keeps its own function and compiles once.
"""

from __future__ import annotations

from functools import partial

from numba import njit

#: numba.njit for a kernel that allocates no array: cached, compiled without reference counts.
kernel = partial(njit, cache=True, _nrt=False)
