"""SVRG OL kernels (Cutkosky & Busa-Fekete, Algorithm 1): the batch gradient of one data
partition (line 5) and the serial phase (lines 7-11), with the LightTouch constraint term.

Serial step t with anchor v_k and batch gradient G_k = grad F^(v_k) of the mean loss:

1. Draw k_f examples i, each with probability c_i / n for the example weights c of mean 1
   (uniformly without weights, :func:`~worker.kernels.objective.sample_example`); the
   variance-reduced estimate is
   (1/k_f) sum_i [grad l_i(w_t) - grad l_i(v_k) + G_k (.) I(x_i)] + l2 w_t,
   where ``sparse`` (l2 = 0) uses the §8.1 importance weights I_j = 1/P(x_ij != 0) (P the
   draw's: the sum of c_i over the rows with x_ij != 0, over n) on the example's support (unbiased,
   O(nnz of the example)), and dense steps use I = 1 (O(d)).
   The support is that of x_i, not of grad l_i(w_t), so a zero slope (hinge) keeps it unbiased.
   Sparse steps keep the control variate -grad_j l_i(v_k) + G_kj I_j only on the coordinates
   the batch is expected to see, N^_k P(x_ij != 0) >= 1 (``inverse_frequency[j] <=
   batch_examples``), and give the others the plain grad_j l_i(w_t). Any fixed choice of
   coordinates keeps the estimate unbiased; on a rarer coordinate the batch holds no example
   of j most of the time, and G_kj I_j is 0 or 1/(N^_k P(x_ij != 0)) times a slope, a
   variance above the plain gradient's that also inflates AdaGrad's sum of squares for good.
   A full batch (N^_k = n) sees every column, so there the estimate is exactly §8.1's.
2. Constraints (LightTouch Algorithm 4, lines 8-15): gamma (1/k_g) sum of grad max(0, g~_i)
   over groups i ~ p, then the p-update, with :mod:`worker.kernels.distribution`.
3. The online learner (:mod:`worker.kernels.online`) takes the sum coordinate by coordinate
   and returns w_{t+1} in the box; the epoch's running average (v_{k+1}, line 12) is kept
   lazily in the :class:`~worker.kernels.layout.KernelState` as in the LightTouch loop.

The batch kernel selects each row of the data set independently with probability
``fraction`` = N^_k / n from a counter-based hash of (seed, round, global row), so the batch
does not depend on how the rows are partitioned nor on which machine sums them.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from worker.kernels.distribution import update_distribution
from worker.kernels.iteration import move_coordinate, sampled_violations, touch
from worker.kernels.jit import kernel
from worker.kernels.layout import GRADIENT_SAMPLES, ITERATION, K_G_TOTAL, K_P_TOTAL, MODE_LIGHT
from worker.kernels.objective import (
    loss_slope,
    loss_value,
    regularizer_slope,
    row_dot,
    sample_example,
)
from worker.kernels.online import learner_step

SerialRun = namedtuple("SerialRun", [
    "config",             # RunConfig: mode (MODE_LIGHT or MODE_PLAIN), gamma, eta_p, lazy, k_*
    "learner", "eta",     # learner code (worker.kernels.online) and AdaGrad's step scale
    "slots",              # learner state, (n_slots, d)
    "sparse",             # §8.1 importance-sampled anchor gradient, O(nnz) steps (needs l2 = 0)
    "anchor",             # v_k, (d,)
    "anchor_gradient",    # batch gradient of the mean loss at v_k, no l2 term, (d,)
    "inverse_frequency",  # n / sum of c_i with x_ij != 0, 0 for columns no example uses, (d,)
    "batch_examples",     # N^_k, the batch's example count (0: plain online gradients)
])

Rows = namedtuple("Rows", [
    "kind",                       # loss code (worker.problem.compiled)
    "indptr", "indices", "data",  # the partition's examples, CSR (rows, d)
    "labels",                     # (rows,)
    "weights",                    # example weights c of mean 1 over the data set (rows,)
    "first_row",                  # global index of the partition's first row
])

_GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


def _mix64(x: int) -> int:
    """splitmix64's finalizer on Python integers."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def batch_key(seed: int, round_index: int) -> np.uint64:
    """The hash key selecting round ``round_index``'s batch rows for ``seed``."""
    return np.uint64(_mix64((_mix64(seed & _MASK) + _GOLDEN * (round_index + 1)) & _MASK))


@kernel(inline="always")
def row_uniform(key, row):
    """A uniform on [0, 1) that depends only on (key, row): splitmix64 of key + row * phi."""
    x = key + np.uint64(row) * np.uint64(_GOLDEN)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return float(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
def gradient_sum(rows, w, key, fraction, out):
    """Add sum of grad l_i(w) over the partition's selected rows to out; return their count
    and, when every row is selected (``fraction`` >= 1), the sum of their losses l_i(w), the
    exact L(v_k) of a certificate (:mod:`worker.algorithms.run.snapshot_rule`; 0 for a sampled
    batch, whose losses nothing reads).

    Parameters
    ----------
    rows : Rows
    w : ndarray, shape (d,)
        The anchor v_k.
    key : uint64
        :func:`batch_key` of the seed and round.
    fraction : float
        Selection probability N^_k / n; >= 1 takes every row (the exact full gradient).
    out : ndarray, shape (d,)
        Accumulator (not cleared).

    Returns
    -------
    count : int
    losses : float
    """
    count = 0
    losses = 0.0
    for r in range(rows.labels.shape[0]):
        if fraction < 1.0 and row_uniform(key, rows.first_row + r) >= fraction:
            continue
        count += 1
        score = row_dot(rows.indptr, rows.indices, rows.data, r, w)
        weight = rows.weights[r]
        if fraction >= 1.0:            # only a batch of every row is a certificate's L(v_k)
            losses += weight * loss_value(rows.kind, score, rows.labels[r])
        slope = weight * loss_slope(rows.kind, score, rows.labels[r])
        if slope != 0.0:
            for k in range(rows.indptr[r], rows.indptr[r + 1]):
                out[rows.indices[k]] += slope * rows.data[k]
    return count, losses


@kernel(inline="always")
def _variance_reduced(p, run, s, t):
    """Step 1 of the module docstring into s.gbuf (touched list); returns #touched."""
    k_f = run.config.k_f
    n = 0
    for _ in range(k_f):
        i = sample_example(p, s.rng)
        label = p.labels[i]
        now = loss_slope(p.kind, row_dot(p.x_indptr, p.x_indices, p.x_data, i, s.w), label)
        then = loss_slope(p.kind, row_dot(p.x_indptr, p.x_indices, p.x_data, i, run.anchor),
                          label)
        difference = (now - then) / k_f
        if difference == 0.0 and not run.sparse:
            continue
        for k in range(p.x_indptr[i], p.x_indptr[i + 1]):
            j = p.x_indices[k]
            if not run.sparse:
                value = difference * p.x_data[k]
            elif run.inverse_frequency[j] <= run.batch_examples:
                value = difference * p.x_data[k] \
                    + run.anchor_gradient[j] * run.inverse_frequency[j] / k_f
            else:
                value = now * p.x_data[k] / k_f
            n = touch(s.gbuf, s.touch_mark, s.touched, n, j, value, t)
    s.counters[GRADIENT_SAMPLES] += k_f
    return n


@kernel(inline="always")
def _learn_coordinate(p, run, s, j, g, t):
    value = learner_step(run.learner, run.slots, run.eta, j, s.w[j], g, p.lower[j], p.upper[j])
    move_coordinate(p, s, j, value, t)


@kernel(inline="always")
def _learn(p, run, s, n_f, n_g, t):
    """Add gamma * constraint part, then let the learner move every affected coordinate."""
    for q in range(n_g):
        j = s.ctouched[q]
        n_f = touch(s.gbuf, s.touch_mark, s.touched, n_f, j, run.config.gamma * s.cbuf[j], t)
    if run.sparse:
        for q in range(n_f):
            j = s.touched[q]
            _learn_coordinate(p, run, s, j, s.gbuf[j], t)
        return
    for j in range(s.w.shape[0]):
        g = run.anchor_gradient[j] + regularizer_slope(p, s.w[j])
        if s.touch_mark[j] == t:
            g += s.gbuf[j]
        _learn_coordinate(p, run, s, j, g, t)


@kernel
def serial_steps(p, run, s, n_iterations):
    """Run n_iterations serial steps of SVRG OL (module docstring), mutating s and run.slots.

    Parameters
    ----------
    p : ProblemArrays
        Problem with constraints aggregated into the groups p is over.
    run : SerialRun
    s : KernelState
        Iterate, epoch running average, p-distribution state, counters and RNG.
    n_iterations : int
    """
    cfg = run.config
    n_groups = s.mu.shape[0]
    for _ in range(n_iterations):
        t = s.counters[ITERATION]
        n_f = _variance_reduced(p, run, s, t)
        n_g = 0
        if cfg.mode == MODE_LIGHT and n_groups > 0:
            n_g = sampled_violations(p, cfg, s, cfg.k_g, t)
            update_distribution(p, cfg, s, cfg.k_p, t)
            s.counters[K_G_TOTAL] += cfg.k_g
            s.counters[K_P_TOTAL] += cfg.k_p
        _learn(p, run, s, n_f, n_g, t)
        s.counters[ITERATION] = t + 1
