"""numba kernels: ``@njit(cache=True)`` functions over plain arrays, no I/O, no pydantic.

Modules: :mod:`.random` (explicit RNG state), :mod:`.sumtree` (O(log m) sampling),
:mod:`.objective` (losses and f), :mod:`.constraints` (g_i), :mod:`.distribution` (the
LightTouch distribution p over constraints), :mod:`.iteration` (one loop for Algorithms 1-4).
"""
