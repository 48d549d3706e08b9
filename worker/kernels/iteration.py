"""One compiled loop for FullTouch (Alg 1), LightTouch (Alg 2/4), MidTouch's phases (Alg 3)
and plain SGD on the box (the inner step of projected SGD).

Each call runs ``n_iterations`` iterations and returns, so Python can report progress, take
snapshots and honour deadlines between chunks. Iteration t (1-based):

1. ``cfg.step_rule``: STEP_SCHEDULE: eta_t = eta_w / (lambda t) if the objective is
   lambda-strongly convex, else eta_w / sqrt(t). The warm-ups of ``eta_w: "auto"``
   (:mod:`worker.algorithms.run.step_rule`): STEP_DOG, distance over gradients (Ivgi, Hinder &
   Carmon, ICML 2023, eq. (1)), eta_t = eta_w r_t / sqrt(sum_{s <= t} |g_s|^2) with
   r_t = max(r_eps, max_{s <= t} |w_s - w_1|) and g_s the step's whole direction; STEP_ADAGRAD,
   diagonal AdaGrad (Duchi, Hazan & Singer, JMLR 2011) with the box's width as each
   coordinate's diameter, eta_tj = eta_w (u_j - l_j) / sqrt(2 sum_s g_sj^2). Both keep the
   sums (``GRADIENT_SUM``) and distances (``RADIUS``) the warm-up measures.
2. Minibatch sizes k_f, k_g, k_p: fixed, or chosen by §5.2 (k ∝ sqrt(eta v / c), k_f = 2).
3. Direction = mean of k_f stochastic subgradients of f (their examples drawn first and
   prefetched, read once the constraints are checked: :func:`draw_examples`), plus
   FULL: gamma * grad max(0, max_i g_i)             (all m constraints checked),
   LIGHT: (gamma / k_g) sum of grad max(0, g~_i) over i ~ p, then the p-update,
   PLAIN: nothing.
4. w <- clip_W(w - eta_t * direction), touching only coordinates that moved when f has no
   dense part (l2 = l1 = 0 and no quadratic); the running average is kept lazily per
   coordinate. The regularizer enters as its subgradient l2 w + l1 sign(w) (sign(0) = 0).
"""

from __future__ import annotations

import numpy as np

from worker.kernels.constraints import rows_value
from worker.kernels.distribution import checked_group, sample_groups, update_distribution
from worker.kernels.jit import kernel
from worker.kernels.layout import (
    AVERAGE_START,
    CHECKS,
    DISTANCE2,
    GRADIENT_SAMPLES,
    GRADIENT_SUM,
    ITERATION,
    K_G_TOTAL,
    K_P_TOTAL,
    MODE_FULL,
    MODE_LIGHT,
    RADIUS,
    STEP_ADAGRAD,
    STEP_DOG,
    STEP_SCHEDULE,
    VF_DEN,
    VF_NUM,
    VG_DEN,
    VG_NUM,
    VP_DEN,
    VP_NUM,
)
from worker.kernels.objective import loss_slope, regularizer_slope, row_dot, sample_example
from worker.kernels.prefetch import prefetch

#: Entries of an int64 or float64 array in one 64-byte cache line.
_LINE = 8


@kernel(inline="always")
def step_size(cfg, s, t):
    """eta_w / (lambda t) (strongly convex) or eta_w / sqrt(t) (Algorithm 4, line 5); during
    a DoG warm-up the step from the sums so far (:func:`_warmup_step` finalises it). The
    minibatch rule sizes the AdaGrad warm-up's batches with eta_w / sqrt(t)."""
    if cfg.step_rule == STEP_DOG:
        return cfg.eta_w * s.scalars[RADIUS] / np.sqrt(max(s.scalars[GRADIENT_SUM], 1e-300))
    if cfg.strong_convexity > 0 and cfg.step_rule == STEP_SCHEDULE:
        return cfg.eta_w / (cfg.strong_convexity * t)
    return cfg.eta_w / np.sqrt(t)


@kernel(inline="always")
def _warmup_step(cfg, s, squared_norm):
    """Add the direction's squared norm to the warm-up sum; the DoG step eta_w r_t / sqrt(sum)."""
    s.scalars[GRADIENT_SUM] += squared_norm
    if s.scalars[GRADIENT_SUM] <= 0.0:
        return 0.0
    return cfg.eta_w * s.scalars[RADIUS] / np.sqrt(s.scalars[GRADIENT_SUM])


@kernel(inline="always")
def _average(num, den):
    return num / den if den > 0 else 0.0


@kernel(inline="always")
def minibatch_sizes(cfg, s, eta, n_groups):
    """(k_f, k_g, k_p): fixed, or the §5.2 rule k ∝ sqrt(eta v / c) anchored at k_f = 2.

    k_p is capped at k_g: the p-update checks no more groups than the constraint step. When
    the step used for sizing is small next to eta_p (the warm-ups of ``eta_w: "auto"`` size
    with eta_w / sqrt(t) or DoG's first tiny steps), the uncapped rule asked for dozens of
    groups per p-update, most of the iteration's cost, without reaching the optimum in fewer
    iterations (measured on the lattice problems of ``bench/accuracy_bench.py``).

    Costs are operation counts (nonzeros touched), not timings, so runs are reproducible.
    When f's gradient has no variance (a quadratic objective) there is no k_f to anchor on;
    the constraint minibatches then get the budget of two f samples, c_g k_g + c_p k_p = 2 c_f.
    """
    if cfg.k_g > 0:
        return cfg.k_f, min(cfg.k_g, n_groups), min(cfg.k_p, n_groups)
    r_f = np.sqrt(eta * _average(s.scalars[VF_NUM], s.scalars[VF_DEN]) / cfg.cost_f)
    r_g = np.sqrt(eta * _average(s.scalars[VG_NUM], s.scalars[VG_DEN]) / cfg.cost_g)
    r_p = np.sqrt(cfg.eta_p * _average(s.scalars[VP_NUM], s.scalars[VP_DEN]) / cfg.cost_g)
    if r_f > 0:
        scale = 2.0 / r_f
    elif r_g > 0 or r_p > 0:
        scale = 2.0 * cfg.cost_f / (cfg.cost_g * (r_g + r_p))
    else:
        return 2, min(2, n_groups), 1
    k_g = max(2, min(n_groups, int(np.rint(scale * r_g))))
    k_p = max(1, min(k_g, n_groups, int(np.rint(scale * r_p))))
    return 2, min(k_g, n_groups), k_p


@kernel(inline="always")
def touch(buf, mark, touched, n, j, value, t):
    """buf[j] += value, listing j in touched[:n] the first time in iteration t."""
    if mark[j] != t:
        mark[j] = t
        buf[j] = 0.0
        touched[n] = j
        n += 1
    buf[j] += value
    return n


@kernel(inline="always")
def _add_row(buf, mark, touched, n, indptr, indices, data, row, scale, t):
    """buf += scale * row (CSR), returns the new touched count."""
    for k in range(indptr[row], indptr[row + 1]):
        n = touch(buf, mark, touched, n, indices[k], scale * data[k], t)
    return n


@kernel(inline="always")
def _squared_norm(buf, touched, n):
    total = 0.0
    for q in range(n):
        total += buf[touched[q]] ** 2
    return total


@kernel(inline="always")
def example_span(p, i):
    """Entries start .. stop - 1 of example row i: computed for fixed-width rows
    (``p.x_width``), one random memory access less than reading the row pointers."""
    if p.x_width > 0:
        return i * p.x_width, (i + 1) * p.x_width
    return p.x_indptr[i], p.x_indptr[i + 1]


@kernel(inline="always")
def draw_examples(p, s, k_f):
    """Draw the k_f examples of iteration t from s.rng and prefetch their rows; keep the RNG
    state they were drawn from in s.example_rng, where :func:`objective_direction` draws the
    same k_f again once the constraints are checked (the draws' order, and so every result,
    is that of drawing them where they are used)."""
    s.example_rng[0] = s.rng[0]
    s.example_rng[1] = s.rng[1]
    if p.quadratic:
        return
    for _ in range(k_f):
        i = sample_example(p, s.rng)
        prefetch(p.labels, i)
        if p.x_width == 0:
            prefetch(p.x_indptr, i)
            continue
        start, stop = example_span(p, i)
        for k in range(start, stop, _LINE):
            prefetch(p.x_indices, k)
            prefetch(p.x_data, k)
        prefetch(p.x_indices, stop - 1)
        prefetch(p.x_data, stop - 1)


@kernel(inline="always")
def objective_direction(p, cfg, s, k_f, t):
    """Mean of k_f sampled subgradients of f into s.gbuf; updates v_f. Returns #touched.

    The examples are drawn from ``s.example_rng``: the ones :func:`draw_examples` drew and
    prefetched earlier in the iteration."""
    if p.quadratic:
        d = s.w.shape[0]
        for j in range(d):
            value = row_dot(p.q_indptr, p.q_indices, p.q_data, j, s.w) + p.linear[j]
            s.touch_mark[j] = t
            s.gbuf[j] = value
            s.touched[j] = j
        s.counters[GRADIENT_SAMPLES] += 1
        return d
    n = 0
    sample_norms = 0.0
    for _ in range(k_f):
        i = sample_example(p, s.example_rng)
        start, stop = example_span(p, i)
        score = 0.0
        for k in range(start, stop):
            score += p.x_data[k] * s.w[p.x_indices[k]]
        slope = loss_slope(p.kind, score, p.labels[i])
        if slope != 0.0:
            for k in range(start, stop):
                n = touch(s.gbuf, s.touch_mark, s.touched, n, p.x_indices[k],
                          slope / k_f * p.x_data[k], t)
                sample_norms += (slope * p.x_data[k]) ** 2
    s.counters[GRADIENT_SAMPLES] += k_f
    if k_f >= 2:
        mean_norm = _squared_norm(s.gbuf, s.touched, n)
        v_f = max(0.0, (sample_norms - k_f * mean_norm) / (k_f - 1))
        s.scalars[VF_NUM] = v_f + cfg.nu * s.scalars[VF_NUM]
        s.scalars[VF_DEN] = 1.0 + cfg.nu * s.scalars[VF_DEN]
    return n


@kernel
def _most_violated(p, s, t):
    """FullTouch: gamma * grad max(0, g(w)) with all m constraints checked, into s.cbuf."""
    m = p.rhs.shape[0]
    best, best_i = rows_value(p, 0, m, s.w)
    s.counters[CHECKS] += m
    if not best > 0.0:
        return 0
    return _add_row(s.cbuf, s.ctouch_mark, s.ctouched, 0, p.a_indptr, p.a_indices, p.a_data,
                    best_i, 1.0, t)


@kernel(inline="always")
def sampled_violations(p, cfg, s, k_g, t):
    """LightTouch: (1/k_g) sum of grad max(0, g~_i) over i ~ p into s.cbuf; updates v_g."""
    sample_groups(cfg, s, t, k_g, s.sampled)
    n = 0
    n_hit = 0
    for q in range(k_g):
        value, i = checked_group(p, s, s.sampled[q], t)
        if value > 0:
            n_hit += 1
            n = _add_row(s.cbuf, s.ctouch_mark, s.ctouched, n, p.a_indptr, p.a_indices,
                         p.a_data, i, 1.0 / k_g, t)
    if k_g >= 2:
        mean_norm = _squared_norm(s.cbuf, s.ctouched, n)
        v_g = cfg.gamma ** 2 * max(0.0, (n_hit - k_g * mean_norm) / (k_g - 1))
        s.scalars[VG_NUM] = v_g + cfg.nu * s.scalars[VG_NUM]
        s.scalars[VG_DEN] = 1.0 + cfg.nu * s.scalars[VG_DEN]
    return n


@kernel(inline="always")
def move_coordinate(p, s, j, value, t):
    """Fold w_j into the lazy running sum, then set w_j = clip_W(value); keeps the squared
    distance from the origin (DoG) current."""
    s.acc[j] += s.w[j] * (t + 1 - s.last[j])
    s.last[j] = t + 1
    moved = min(max(value, p.lower[j]), p.upper[j])
    s.scalars[DISTANCE2] += (moved - s.origin[j]) ** 2 - (s.w[j] - s.origin[j]) ** 2
    s.w[j] = moved


@kernel(inline="always")
def _dense_direction(p, s, j, t):
    """Coordinate j of the whole direction when f has a dense part."""
    return regularizer_slope(p, s.w[j]) + (s.gbuf[j] if s.touch_mark[j] == t else 0.0)


@kernel(inline="always")
def _apply_step(p, cfg, s, eta, n_f, n_g, t):
    """w <- clip_W(w - eta (gbuf + gamma cbuf + l2 w + l1 sign(w))) (Algorithm 4, line 10);
    in a warm-up, eta is the DoG step including this direction, or AdaGrad's per coordinate."""
    for q in range(n_g):
        j = s.ctouched[q]
        n_f = touch(s.gbuf, s.touch_mark, s.touched, n_f, j, cfg.gamma * s.cbuf[j], t)
    dense = p.l2 > 0 or p.l1 > 0 or p.quadratic
    warmup = cfg.step_rule != STEP_SCHEDULE
    if warmup:
        if dense:
            squared = 0.0
            for j in range(s.w.shape[0]):
                squared += _dense_direction(p, s, j, t) ** 2
        else:
            squared = _squared_norm(s.gbuf, s.touched, n_f)
        eta = _warmup_step(cfg, s, squared)
    if cfg.step_rule == STEP_ADAGRAD:
        # Diagonal AdaGrad: w_j -= eta_w (u_j - l_j) / sqrt(2 sum g_j^2) * g_j.
        for q in range(s.w.shape[0] if dense else n_f):
            j = q if dense else s.touched[q]
            direction = _dense_direction(p, s, j, t) if dense else s.gbuf[j]
            s.squares[j] += direction * direction
            if s.squares[j] > 0.0:
                scale = cfg.eta_w * (p.upper[j] - p.lower[j]) / np.sqrt(2.0 * s.squares[j])
                move_coordinate(p, s, j, s.w[j] - scale * direction, t)
    elif dense:
        for j in range(s.w.shape[0]):
            move_coordinate(p, s, j, s.w[j] - eta * _dense_direction(p, s, j, t), t)
    else:
        for q in range(n_f):
            j = s.touched[q]
            move_coordinate(p, s, j, s.w[j] - eta * s.gbuf[j], t)
    if warmup:
        s.scalars[RADIUS] = max(s.scalars[RADIUS], np.sqrt(max(s.scalars[DISTANCE2], 0.0)))


@kernel
def run_iterations(p, cfg, s, n_iterations):
    """Run n_iterations iterations of the configured algorithm, mutating the state s."""
    n_groups = s.mu.shape[0]
    for _ in range(n_iterations):
        t = s.counters[ITERATION]
        eta = step_size(cfg, s, t)
        k_f, k_g, k_p = minibatch_sizes(cfg, s, eta, n_groups)
        draw_examples(p, s, k_f)
        n_g = 0
        if cfg.mode == MODE_FULL:
            n_g = _most_violated(p, s, t)
        elif cfg.mode == MODE_LIGHT and n_groups > 0:
            n_g = sampled_violations(p, cfg, s, k_g, t)
            update_distribution(p, cfg, s, k_p, t)
            s.counters[K_G_TOTAL] += k_g
            s.counters[K_P_TOTAL] += k_p
        n_f = objective_direction(p, cfg, s, k_f, t)
        _apply_step(p, cfg, s, eta, n_f, n_g, t)
        s.counters[ITERATION] = t + 1


@kernel
def running_average(s, out):
    """The mean of iterates AVERAGE_START .. t-1 into out, shape (d,)."""
    t = s.counters[ITERATION]
    count = t - s.counters[AVERAGE_START]
    for j in range(out.shape[0]):
        out[j] = (s.acc[j] + s.w[j] * (t - s.last[j])) / max(count, 1)


@kernel
def restart_average(s, w):
    """Set the iterate to w and start a new running average from the current iteration."""
    t = s.counters[ITERATION]
    for j in range(w.shape[0]):
        s.w[j] = w[j]
        s.acc[j] = 0.0
        s.last[j] = t
    s.counters[AVERAGE_START] = t
    _measure_distance(s)


@kernel
def replace_iterate(s, w):
    """Set the iterate to w (e.g. after an exact projection), keeping the running average."""
    t = s.counters[ITERATION]
    for j in range(w.shape[0]):
        if w[j] != s.w[j]:
            s.acc[j] += s.w[j] * (t - s.last[j])
            s.last[j] = t
            s.w[j] = w[j]
    _measure_distance(s)


@kernel
def _measure_distance(s):
    """Recompute DoG's squared distance |w - origin|^2 after the iterate was replaced."""
    total = 0.0
    for j in range(s.w.shape[0]):
        total += (s.w[j] - s.origin[j]) ** 2
    s.scalars[DISTANCE2] = total
    s.scalars[RADIUS] = max(s.scalars[RADIUS], np.sqrt(total))
