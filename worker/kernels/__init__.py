"""numba kernels: compiled functions over plain arrays, no I/O, no pydantic. Those that
allocate nothing are ``@kernel`` (:mod:`.jit`: cached, no reference counting), the rest
``@njit(cache=True)``.

Modules: :mod:`.random` (explicit RNG state), :mod:`.sumtree` (O(log m) sampling),
:mod:`.objective` (losses and f), :mod:`.constraints` (g_i), :mod:`.distribution` (the
LightTouch distribution p over constraints), :mod:`.iteration` (one loop for Algorithms 1-4).
"""
