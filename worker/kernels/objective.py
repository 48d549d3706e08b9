"""The objective f: losses of a score s = x.w, stochastic subgradients, full values.

Losses are the records of :mod:`worker.losses` (hinge, logistic, squared, squared hinge),
dispatched here on their integer codes; the quadratic objective is (1/2) w'Qw + c'w. Every
kind adds the regularizer r(w) = l1 ||w||_1 + (l2/2)||w||^2, whose subgradient takes
sign(0) = 0 for the l1 part. The loss part is (1/n) sum_i c_i loss_i with the example
weights c of mean 1 (``p.x_weights``; all 1 when it is empty).
"""

from __future__ import annotations

from worker.kernels.jit import kernel
from worker.kernels.random import randint, search_cumulative, uniform
from worker.losses import hinge, logistic, squared, squared_hinge


@kernel(inline="always")
def _loss(kind, score, label, slope):
    """The registered loss of code ``kind`` at (s, y): its slope if ``slope``, else its value;
    raises on an unknown code (one line per loss of :data:`worker.losses.LOSSES`)."""
    if kind == hinge.CODE:
        return hinge.slope(score, label) if slope else hinge.value(score, label)
    if kind == logistic.CODE:
        return logistic.slope(score, label) if slope else logistic.value(score, label)
    if kind == squared.CODE:
        return squared.slope(score, label) if slope else squared.value(score, label)
    if kind == squared_hinge.CODE:
        return squared_hinge.slope(score, label) if slope else squared_hinge.value(score, label)
    raise ValueError("unknown loss code")


@kernel(inline="always")
def loss_value(kind, score, label):
    """loss(s, y) for a loss code of :data:`worker.losses.LOSSES`."""
    return _loss(kind, score, label, False)


@kernel(inline="always")
def loss_slope(kind, score, label):
    """A subgradient d loss / d s at s for a loss code (hinge: -y where y s < 1, else 0)."""
    return _loss(kind, score, label, True)


@kernel(inline="always")
def row_dot(indptr, indices, data, row, w):
    """x_row . w for a CSR matrix."""
    total = 0.0
    for k in range(indptr[row], indptr[row + 1]):
        total += data[k] * w[indices[k]]
    return total


@kernel(inline="always")
def example_weight(p, i):
    """c_i, example i's weight of mean 1 (1 without weights)."""
    return 1.0 if p.x_weights.shape[0] == 0 else p.x_weights[i]


@kernel(inline="always")
def sample_example(p, rng):
    """An example drawn with probability c_i / n: uniformly without weights, else by a
    binary search of a uniform in the weights' running sums ``p.x_cumulative`` (rows of
    weight 0 are never drawn).

    Drawing by weight keeps a sampled subgradient an unbiased estimate of the weighted
    mean's, E[slope_i x_i] = (1/n) sum_i c_i slope_i x_i, as drawing uniformly and scaling
    by c_i would; but its second moment is (1/n) sum_i c_i |g_i|^2 where scaling gives
    (1/n) sum_i c_i^2 |g_i|^2, which grows with the weights' spread and wastes the draws of
    weight-0 rows (measured: docs/rates.md#weights).

    Parameters
    ----------
    p : ProblemArrays
    rng : ndarray, uint64, shape (2,)
        Advanced once.

    Returns
    -------
    int
        A row index in 0..n-1.
    """
    cumulative = p.x_cumulative
    if cumulative.shape[0] == 0:
        return randint(rng, p.labels.shape[0])
    n = cumulative.shape[0]
    return search_cumulative(cumulative, n, uniform(rng) * cumulative[n - 1])


@kernel(inline="always")
def regularizer_slope(p, value):
    """d r / d w_j at w_j = value: l2 w_j + l1 sign(w_j) (sign(0) = 0)."""
    slope = p.l2 * value
    if p.l1 > 0 and value != 0.0:
        slope += p.l1 if value > 0 else -p.l1
    return slope


@kernel
def objective_value(p, w):
    """f(w) over all examples (or the quadratic), plus l1 ||w||_1 + (l2/2)||w||^2.

    Parameters
    ----------
    p : ProblemArrays
    w : ndarray, shape (d,)
    """
    total = 0.0
    n = p.x_indptr.shape[0] - 1
    if p.quadratic:
        for i in range(w.shape[0]):
            total += w[i] * (0.5 * row_dot(p.q_indptr, p.q_indices, p.q_data, i, w) + p.linear[i])
    elif n > 0:
        for i in range(n):
            score = row_dot(p.x_indptr, p.x_indices, p.x_data, i, w)
            total += example_weight(p, i) * loss_value(p.kind, score, p.labels[i])
        total /= n
    squares = 0.0
    absolutes = 0.0
    for j in range(w.shape[0]):
        squares += w[j] * w[j]
        absolutes += abs(w[j])
    if p.l2 > 0:
        total += 0.5 * p.l2 * squares
    if p.l1 > 0:
        total += p.l1 * absolutes
    return total


@kernel(inline="always")
def start_gradient(p, w, out, regularized):
    """out = Qw + c (quadratic objective) or 0, plus the regularizer's subgradient
    l2 w + l1 sign(w) when ``regularized`` (shape (d,))."""
    for j in range(w.shape[0]):
        out[j] = regularizer_slope(p, w[j]) if regularized else 0.0
    if p.quadratic:
        for j in range(w.shape[0]):
            out[j] += row_dot(p.q_indptr, p.q_indices, p.q_data, j, w) + p.linear[j]


@kernel(inline="always")
def add_example_gradient(p, i, w, scale, out):
    """out += scale * (a subgradient of example i's loss at w)."""
    slope = loss_slope(p.kind, row_dot(p.x_indptr, p.x_indices, p.x_data, i, w), p.labels[i])
    if slope != 0.0:
        for k in range(p.x_indptr[i], p.x_indptr[i + 1]):
            out[p.x_indices[k]] += scale * slope * p.x_data[k]


@kernel
def objective_gradient(p, w, out):
    """A (sub)gradient of f at w over all examples, into out (shape (d,))."""
    start_gradient(p, w, out, True)
    if p.quadratic:
        return
    n = p.x_indptr.shape[0] - 1
    for i in range(n):
        add_example_gradient(p, i, w, example_weight(p, i) / n, out)


@kernel
def loss_spread(p, w):
    """sqrt(sum_i c_i^2 (l_i - L)^2 / (n - 1)) of the examples' losses l_i at w and their
    weighted mean L = (1/n) sum_i c_i l_i (0 for a quadratic objective): over sqrt(n), the
    standard error of the (weighted) mean loss as an estimate of the expected one; without
    weights, the losses' standard deviation."""
    n = p.x_indptr.shape[0] - 1
    if p.quadratic or n < 2:
        return 0.0
    total, squares, cross, weights = 0.0, 0.0, 0.0, 0.0
    for i in range(n):
        value = loss_value(p.kind, row_dot(p.x_indptr, p.x_indices, p.x_data, i, w), p.labels[i])
        c = example_weight(p, i)
        total += c * value
        squares += c * c * value * value
        cross += c * c * value
        weights += c * c
    mean = total / n
    return (max(squares - 2.0 * mean * cross + mean * mean * weights, 0.0) / (n - 1)) ** 0.5
