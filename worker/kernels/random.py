"""A small explicit-state RNG (xoroshiro128+ seeded by splitmix64) usable inside numba.

State is a ``uint64`` array of shape (2,), passed in and mutated: the same seed gives the
same stream in compiled and in plain-Python calls, which the numpy reference tests rely on.
"""

from __future__ import annotations

import numpy as np

from worker.kernels.jit import kernel

_MASK = (1 << 64) - 1


def seed_state(seed: int) -> np.ndarray:
    """Expand an integer seed into a non-zero xoroshiro128+ state (splitmix64), shape (2,)."""
    words = []
    x = seed & _MASK
    for _ in range(2):
        x = (x + 0x9E3779B97F4A7C15) & _MASK
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        words.append(z ^ (z >> 31))
    return np.array(words, dtype=np.uint64)


@kernel(inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@kernel(inline="always")
def next_u64(state):
    """Advance ``state`` (uint64, (2,)) and return the next 64-bit output."""
    s0 = state[0]
    s1 = state[1]
    result = s0 + s1
    s1 ^= s0
    state[0] = _rotl(s0, 24) ^ s1 ^ (s1 << np.uint64(16))
    state[1] = _rotl(s1, 37)
    return result


@kernel(inline="always")
def uniform(state):
    """A float64 uniform on [0, 1) with 53 random bits."""
    return float(next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel(inline="always")
def randint(state, n):
    """An integer uniform on {0, ..., n-1} (n >= 1)."""
    k = int(uniform(state) * n)
    return k if k < n else n - 1


@kernel(inline="always")
def search_cumulative(cumulative, n, r):
    """Smallest q < n with cumulative[q] > r (binary search of running sums (n,) for a
    draw r in [0, cumulative[n - 1]))."""
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cumulative[mid] > r:
            hi = mid
        else:
            lo = mid + 1
    return lo
