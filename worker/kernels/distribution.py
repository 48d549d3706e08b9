"""The LightTouch distribution p over constraint groups (Algorithm 4, lines 8 and 11-15).

p is kept as unnormalized log weights u. One iteration adds eta_p * Delta_p, where
Delta_p = gamma * mu + (gamma G / k_p) sum_{j in S} e_j (max(0, g_j(w)) - mu_j).

Two exact representations:

* **dense** (the paper's): u is updated for all G groups every iteration, O(G) arithmetic
  per iteration. The weights exp(u_j - shift) are kept beside u and multiplied by
  exp(eta_p gamma mu_j), which changes only for the k_p groups just checked, so an iteration
  costs G multiplications instead of G exponentials; they are recomputed from u every
  ``SYNC_EVERY`` iterations (rounding), when eta_p gamma changes, and before they could
  overflow.
* **lazy** (sublinear): between two samplings of group j, u_j grows linearly,
  u_j(t) = log_w[j] + eta_p * gamma * mu_j * (t - stamp[j]), so it is stored as that line.
  Groups with mu_j = 0 keep a constant weight and live in a sum tree (O(log G) sampling
  and update); only the groups with mu_j > 0 (``vlist``) are touched every iteration.
  Cost per iteration: O(|{mu > 0}| + k log G).

Both give the same distribution up to rounding; normalization is implicit (sampling draws
from the unnormalized weights).
"""

from __future__ import annotations

import numpy as np

from worker.kernels.constraints import group_maximum, group_value
from worker.kernels.jit import kernel
from worker.kernels.layout import (
    CHECKS,
    N_VIOLATED,
    NEEDS_RESCALE,
    P_RATE,
    P_SYNCED,
    SHIFT,
    VP_DEN,
    VP_NUM,
)
from worker.kernels.random import randint, search_cumulative, uniform
from worker.kernels.sumtree import tree_find, tree_rebuild, tree_set

_MAX_EXPONENT = 600.0
#: Dense p: iterations between two recomputations of the weights from the log weights.
SYNC_EVERY = 1024
#: Dense p: the weights' total is kept within [1 / _WEIGHT_RANGE, _WEIGHT_RANGE].
_WEIGHT_RANGE = 1e250
#: Dense p: groups per block of the sampling's cumulative sums (:func:`_block_cumulative`).
_BLOCK = 16


@kernel(inline="always")
def group_size(p, group):
    """Number of constraints in one group (its cost in constraint checks)."""
    return p.group_ptr[group + 1] - p.group_ptr[group]


@kernel(inline="always")
def log_weight(cfg, s, j, t):
    """u_j at iteration t (before that iteration's update)."""
    if cfg.lazy:
        return s.log_w[j] + cfg.eta_p * cfg.gamma * s.mu[j] * (t - s.stamp[j])
    return s.log_w[j]


@kernel
def init_distribution(p, cfg, s, w, t):
    """Uniform p and mu_j = max(0, g~_j(w)) for every group (Algorithm 4, lines 2-3)."""
    n_groups = s.mu.shape[0]
    s.scalars[SHIFT] = 0.0
    s.counters[N_VIOLATED] = 0
    for j in range(n_groups):
        value = group_maximum(p, j, w)
        s.counters[CHECKS] += group_size(p, j)
        s.log_w[j] = 0.0
        s.stamp[j] = t
        s.mu[j] = max(0.0, value)
        if cfg.lazy:
            if s.mu[j] > 0:
                _vlist_add(s, j)
                s.tree[s.tree.shape[0] // 2 + j] = 0.0
            else:
                s.tree[s.tree.shape[0] // 2 + j] = 1.0
    if cfg.lazy:
        tree_rebuild(s.tree)
    else:
        _sync_dense(cfg, s, t)


@kernel
def _sync_dense(cfg, s, t):
    """Dense p: shift = max_j u_j, the weights exp(u_j - shift) and the factors
    exp(eta_p gamma mu_j) recomputed from u and mu, O(G) exponentials."""
    rate = cfg.eta_p * cfg.gamma
    shift = -np.inf
    for j in range(s.mu.shape[0]):
        shift = max(shift, s.log_w[j])
    for j in range(s.mu.shape[0]):
        s.p_weight[j] = np.exp(s.log_w[j] - shift)
        s.p_factor[j] = np.exp(rate * s.mu[j])
    s.scalars[SHIFT] = shift
    s.scalars[P_RATE] = rate
    s.counters[P_SYNCED] = t


@kernel(inline="always")
def _dense_is_stale(cfg, s, t):
    """Whether the dense weights must be recomputed before iteration t."""
    return (t - s.counters[P_SYNCED] >= SYNC_EVERY
            or s.scalars[P_RATE] != cfg.eta_p * cfg.gamma)


@kernel(inline="always")
def _vlist_add(s, j):
    n = s.counters[N_VIOLATED]
    s.vlist[n] = j
    s.vpos[j] = n
    s.counters[N_VIOLATED] = n + 1


@kernel(inline="always")
def _vlist_remove(s, j):
    n = s.counters[N_VIOLATED] - 1
    q = s.vpos[j]
    last = s.vlist[n]
    s.vlist[q] = last
    s.vpos[last] = q
    s.counters[N_VIOLATED] = n


@kernel
def _rescale(cfg, s, t):
    """Move the common offset to the largest current log weight; rebuild the tree, O(G)."""
    shift = -np.inf
    for j in range(s.mu.shape[0]):
        shift = max(shift, log_weight(cfg, s, j, t))
    s.scalars[SHIFT] = shift
    leaves = s.tree.shape[0] // 2
    for j in range(s.mu.shape[0]):
        s.tree[leaves + j] = 0.0 if s.mu[j] > 0 else np.exp(s.log_w[j] - shift)
    tree_rebuild(s.tree)
    s.scalars[NEEDS_RESCALE] = 0.0


@kernel(inline="always")
def _set_group(cfg, s, j, new_log, new_mu, t):
    """Lazy mode: restart group j's line at time t with value new_log and slope from new_mu."""
    was_violated = s.mu[j] > 0
    s.log_w[j] = new_log
    s.stamp[j] = t
    s.mu[j] = new_mu
    if new_mu > 0:
        if not was_violated:
            _vlist_add(s, j)
            tree_set(s.tree, j, 0.0)
        return
    if was_violated:
        _vlist_remove(s, j)
    exponent = new_log - s.scalars[SHIFT]
    if exponent > _MAX_EXPONENT:
        s.scalars[NEEDS_RESCALE] = 1.0
        exponent = _MAX_EXPONENT
    tree_set(s.tree, j, np.exp(exponent))


@kernel
def _prepare_violated(cfg, s, t):
    """Cumulative weights of the mu > 0 groups into s.weights; returns their total."""
    n = s.counters[N_VIOLATED]
    total = 0.0
    for q in range(n):
        total += np.exp(log_weight(cfg, s, s.vlist[q], t) - s.scalars[SHIFT])
        s.weights[q] = total
    return total


@kernel(inline="always")
def sample_groups(cfg, s, t, k, out):
    """Draw k groups i.i.d. from p(t) into out[:k] (Algorithm 4, line 8)."""
    n_groups = s.mu.shape[0]
    if cfg.lazy:
        if s.scalars[NEEDS_RESCALE] > 0:
            _rescale(cfg, s, t)
        violated_total = _prepare_violated(cfg, s, t)
        if not (violated_total < np.exp(_MAX_EXPONENT)) or violated_total + s.tree[1] < 1e-280:
            _rescale(cfg, s, t)
            violated_total = _prepare_violated(cfg, s, t)
        tree_total = s.tree[1]
        for q in range(k):
            r = uniform(s.rng) * (tree_total + violated_total)
            if r < tree_total:
                out[q] = tree_find(s.tree, r)
            else:
                n = s.counters[N_VIOLATED]
                out[q] = s.vlist[search_cumulative(s.weights, n, r - tree_total)]
        return
    if _dense_is_stale(cfg, s, t):
        _sync_dense(cfg, s, t)
    total = _block_cumulative(s, n_groups)
    if not (1.0 / _WEIGHT_RANGE < total < _WEIGHT_RANGE):
        _sync_dense(cfg, s, t)
        total = _block_cumulative(s, n_groups)
    n_blocks = -(-n_groups // _BLOCK)
    for q in range(k):
        out[q] = _block_find(s, n_groups, n_blocks, uniform(s.rng) * total)


@kernel(inline="always")
def _block_cumulative(s, n_groups):
    """Dense p: the cumulative sums of the weights of blocks of ``_BLOCK`` consecutive groups
    into s.weights[:ceil(G / _BLOCK)]; returns their total.

    The blocks' sums do not wait on one another, so the core adds several at once where one
    running sum over all G groups would wait for every addition in turn."""
    total = 0.0
    for b in range(-(-n_groups // _BLOCK)):
        block = 0.0
        for j in range(b * _BLOCK, min(n_groups, (b + 1) * _BLOCK)):
            block += s.p_weight[j]
        total += block
        s.weights[b] = total
    return total


@kernel(inline="always")
def _block_find(s, n_groups, n_blocks, r):
    """The group whose cumulative interval holds r (0 <= r < total): its block by binary
    search over the blocks' sums, then the group by a walk through the block; rounding that
    leaves r past the block's last group picks the last one of positive weight."""
    b = search_cumulative(s.weights, n_blocks, r)
    if b > 0:
        r -= s.weights[b - 1]
    picked = b * _BLOCK
    for j in range(b * _BLOCK, min(n_groups, (b + 1) * _BLOCK)):
        if s.p_weight[j] > 0.0:
            picked = j
            if r < s.p_weight[j]:
                break
            r -= s.p_weight[j]
    return picked


@kernel(inline="always")
def _sample_subset(s, n_groups, k, t):
    """k distinct groups uniformly (Floyd's algorithm) into s.sampled[:k]."""
    q = 0
    for j in range(n_groups - k, n_groups):
        r = randint(s.rng, j + 1)
        pick = j if s.pmark[r] == t else r
        s.pmark[pick] = t
        s.sampled[q] = pick
        q += 1


@kernel(inline="always")
def checked_group(p, s, group, t):
    """(max_{i in group} g_i(w), argmax i) at the iterate w of iteration t, checked and counted
    once per iteration: a group drawn again (p is often concentrated on a few groups, so the
    k_g draws repeat one) or checked again by the p-update reuses the first check."""
    if s.check_mark[group] != t:
        value, row = group_value(p, group, s.w)
        s.counters[CHECKS] += group_size(p, group)
        s.check_mark[group] = t
        s.check_value[group] = value
        s.check_row[group] = row
    return s.check_value[group], s.check_row[group]


@kernel(inline="always")
def update_distribution(p, cfg, s, k_p, t):
    """The p-update of Algorithm 4, lines 11-15, for iteration t; returns nothing.

    Checks the k_p sampled groups at the iterate s.w (counted, unless the constraint step
    checked one already: :func:`checked_group`), refreshes their mu, updates the variance
    estimate v_p of §5.2, and moves p (dense: all G log weights; lazy: the sampled ones).
    """
    n_groups = s.mu.shape[0]
    _sample_subset(s, n_groups, k_p, t)
    rate = cfg.eta_p * cfg.gamma
    correction = rate * n_groups / k_p
    spread = 0.0
    for q in range(k_p):
        j = s.sampled[q]
        if s.check_mark[j] == t:
            value = s.check_value[j]
        else:
            value = group_maximum(p, j, s.w)
            s.counters[CHECKS] += group_size(p, j)
        s.sampled_viol[q] = max(0.0, value)
        spread += (s.sampled_viol[q] - s.mu[j]) ** 2
    v_p = (cfg.gamma * n_groups) ** 2 * spread / k_p
    s.scalars[VP_NUM] = v_p + cfg.nu * s.scalars[VP_NUM]
    s.scalars[VP_DEN] = 1.0 + cfg.nu * s.scalars[VP_DEN]
    if cfg.lazy:
        for q in range(k_p):
            j = s.sampled[q]
            new_log = log_weight(cfg, s, j, t) + rate * s.mu[j] \
                + correction * (s.sampled_viol[q] - s.mu[j])
            _set_group(cfg, s, j, new_log, s.sampled_viol[q], t + 1)
        return
    if _dense_is_stale(cfg, s, t):
        _sync_dense(cfg, s, t)
    for j in range(n_groups):
        s.log_w[j] += rate * s.mu[j]
        s.p_weight[j] *= s.p_factor[j]
    for q in range(k_p):
        j = s.sampled[q]
        s.log_w[j] += correction * (s.sampled_viol[q] - s.mu[j])
        s.mu[j] = s.sampled_viol[q]
        s.p_weight[j] = np.exp(min(s.log_w[j] - s.scalars[SHIFT], _MAX_EXPONENT))
        s.p_factor[j] = np.exp(rate * s.mu[j])


@kernel
def rebase_distribution(cfg, s, t):
    """Lazy mode: restart every group's line at time t, before the slope (gamma) changes."""
    if not cfg.lazy:
        return
    for j in range(s.mu.shape[0]):
        s.log_w[j] = log_weight(cfg, s, j, t)
        s.stamp[j] = t
