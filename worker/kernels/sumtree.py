"""A binary sum tree over nonnegative weights: set one weight and sample in O(log m).

Layout: ``tree`` has shape (2 * size,) with ``size`` a power of two >= m; leaf j lives at
``size + j`` and every inner node holds the sum of its two children (recomputed, never
incremented, so no rounding drift accumulates). ``tree[1]`` is the total.
"""

from __future__ import annotations

import numpy as np

from worker.kernels.jit import kernel


def new_tree(m: int) -> np.ndarray:
    """An all-zero tree for m leaves, shape (2 * size,)."""
    size = 1
    while size < max(m, 1):
        size *= 2
    return np.zeros(2 * size)


@kernel(inline="always")
def tree_set(tree, j, value):
    """Set leaf j to ``value`` and refresh its ancestors."""
    node = tree.shape[0] // 2 + j
    tree[node] = value
    node //= 2
    while node >= 1:
        tree[node] = tree[2 * node] + tree[2 * node + 1]
        node //= 2


@kernel(inline="always")
def tree_find(tree, r):
    """The leaf j whose cumulative interval contains r, for 0 <= r < tree[1]."""
    size = tree.shape[0] // 2
    node = 1
    while node < size:
        left = tree[2 * node]
        if r < left or tree[2 * node + 1] <= 0.0:
            node = 2 * node
        else:
            r -= left
            node = 2 * node + 1
    return node - size


@kernel
def tree_rebuild(tree):
    """Recompute every inner node from the leaves, O(size)."""
    size = tree.shape[0] // 2
    for node in range(size - 1, 0, -1):
        tree[node] = tree[2 * node] + tree[2 * node + 1]
