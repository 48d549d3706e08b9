"""Networks of dense layers over sparse rows: scores, losses of scores, gradients by backprop.

A network maps a row x (d,) to K scores through L layers: z_0 = x, z_{l+1} = W_l' z_l + b_l
with W_l of shape (n_l, n_{l+1}), ReLU after every layer but the last. Its parameters theta
are one flat vector; layer l's W_l (row-major) starts at ``weight_at[l]`` and its b_l at
``bias_at[l]`` (-1: no bias). The linear model is the network with L = 1 and no bias, so
theta is w (K = 1) or W (d, K) row-major. The first layer reads CSR rows (cost nnz(x)
n_1 per row); the others are dense products (BLAS through numba's ``np.dot``).

Heads: a binary loss of :mod:`worker.losses` on the one score (K = 1), or the softmax
cross-entropy ``log sum_k exp(s_k) - s_y`` on K scores with an integer label y. Each row's
loss carries its example weight c_i of mean 1 (``row_weights``; an empty array: all 1).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from worker.kernels.objective import loss_slope, loss_value

#: The loss code of the softmax cross-entropy head (the binary losses keep theirs).
SOFTMAX = -1

NetworkArrays = namedtuple("NetworkArrays", [
    "sizes",      # (L+1,) int64: n_0 = d inputs, ..., n_L = K scores
    "weight_at",  # (L,) int64: offset of W_l in theta
    "bias_at",    # (L,) int64: offset of b_l in theta, -1 without bias
])


@njit(cache=True)
def _weights(net, theta, layer):
    """W_l as a (n_l, n_{l+1}) view of theta."""
    start = net.weight_at[layer]
    rows, cols = net.sizes[layer], net.sizes[layer + 1]
    return theta[start:start + rows * cols].reshape((rows, cols))


#: The first layer multiplies dense copies of the sampled rows (BLAS) when they hold at least
#: this share of non-zeros, and walks the sparse rows otherwise.
DENSE_ROWS = 0.1


@njit(cache=True)
def dense_rows(x_indptr, x_indices, x_data, rows, d):
    """The rows (B,) as a dense (B, d) array, or a (0, d) one when they are too sparse
    (fewer than :data:`DENSE_ROWS` non-zeros) for a dense product to pay."""
    batch = rows.shape[0]
    entries = 0
    for b in range(batch):
        entries += x_indptr[rows[b] + 1] - x_indptr[rows[b]]
    if entries < DENSE_ROWS * batch * d:
        return np.zeros((0, d))
    dense = np.zeros((batch, d))
    for b in range(batch):
        i = rows[b]
        for e in range(x_indptr[i], x_indptr[i + 1]):
            dense[b, x_indices[e]] += x_data[e]
    return dense


@njit(cache=True)
def forward(net, theta, x_indptr, x_indices, x_data, rows):
    """The outputs of every layer for the CSR rows ``rows`` (B,).

    Returns
    -------
    dense : ndarray, shape (B, d) or (0, d)
        :func:`dense_rows` of the rows, for :func:`backward`.
    outputs : list of ndarray
        Layer l's output, shape (B, n_{l+1}), after its ReLU (none after the last layer):
        the last entry holds the scores (B, K).
    """
    layers = net.sizes.shape[0] - 1
    batch = rows.shape[0]
    first = _weights(net, theta, 0)
    dense = dense_rows(x_indptr, x_indices, x_data, rows, net.sizes[0])
    if dense.shape[0] == batch:
        out = np.dot(dense, first)
    else:
        width = net.sizes[1]
        out = np.zeros((batch, width))
        for b in range(batch):
            i = rows[b]
            for e in range(x_indptr[i], x_indptr[i + 1]):
                j, v = x_indices[e], x_data[e]
                for k in range(width):
                    out[b, k] += v * first[j, k]
    outputs = [out]
    for layer in range(layers):
        if layer > 0:
            out = np.dot(outputs[layer - 1], _weights(net, theta, layer))
            outputs.append(out)
        if net.bias_at[layer] >= 0:
            bias = theta[net.bias_at[layer]:net.bias_at[layer] + out.shape[1]]
            for b in range(batch):
                out[b, :] += bias
        if layer < layers - 1:
            np.maximum(out, 0.0, out)
    return dense, outputs


@njit(cache=True)
def backward(net, theta, x_indptr, x_indices, x_data, rows, dense, outputs, delta, grad):
    """grad += d/d theta of sum_b delta[b] . s_b, by backpropagation through ``outputs``.

    Parameters
    ----------
    net : NetworkArrays
    theta : ndarray, shape (P,)
    x_indptr, x_indices, x_data : ndarray
        CSR rows (n, d).
    rows : ndarray of int64, shape (B,)
    dense, outputs
        :func:`forward` of these rows at theta.
    delta : ndarray, shape (B, K)
        d (loss) / d (scores); overwritten.
    grad : ndarray, shape (P,)
        Accumulated into.
    """
    layers = net.sizes.shape[0] - 1
    batch = rows.shape[0]
    for layer in range(layers - 1, -1, -1):
        width = net.sizes[layer + 1]
        if net.bias_at[layer] >= 0:
            at = net.bias_at[layer]
            for b in range(batch):
                for k in range(width):
                    grad[at + k] += delta[b, k]
        start = net.weight_at[layer]
        below = outputs[layer - 1] if layer > 0 else dense
        if below.shape[0] == batch:
            grad[start:start + below.shape[1] * width] += np.dot(below.T, delta).ravel()
        else:
            for b in range(batch):
                i = rows[b]
                for e in range(x_indptr[i], x_indptr[i + 1]):
                    at = start + x_indices[e] * width
                    v = x_data[e]
                    for k in range(width):
                        grad[at + k] += v * delta[b, k]
        if layer > 0:
            delta = np.dot(delta, _weights(net, theta, layer).T) * (below > 0.0)


@njit(cache=True)
def network_scores(net, theta, x_indptr, x_indices, x_data, rows):
    """The scores (B, K) of the CSR rows ``rows`` (B,) under theta."""
    return forward(net, theta, x_indptr, x_indices, x_data, rows)[1][-1]


@njit(cache=True)
def loss_gradient(net, theta, x_indptr, x_indices, x_data, labels, row_weights, rows, code,
                  weight, grad):
    """The summed weighted loss sum_b c_b loss_b of the rows (B,) (head ``code``, labels
    (n,), example weights ``row_weights`` (n,) or empty for all 1) and grad += weight * its
    gradient in theta (P,): forward, head, backward in one call."""
    dense, outputs = forward(net, theta, x_indptr, x_indices, x_data, rows)
    delta = np.empty_like(outputs[-1])
    total = head_losses(code, outputs[-1], labels, row_weights, rows, delta, weight)
    backward(net, theta, x_indptr, x_indices, x_data, rows, dense, outputs, delta, grad)
    return total


#: Rows per forward and backward pass of :func:`full_loss_gradient` (its dense copies of
#: the rows and layer outputs hold this many rows at a time).
FULL_CHUNK = 4096


@njit(cache=True)
def full_loss_gradient(net, theta, x_indptr, x_indices, x_data, labels, row_weights, code,
                       grad):
    """The mean loss (1/n) sum_i c_i loss_i over all n CSR rows and its gradient: the full
    batch of the quasi-Newton methods, in passes of :data:`FULL_CHUNK` rows.

    Parameters
    ----------
    net, theta, x_indptr, x_indices, x_data
        As for :func:`backward`: the layout, theta (P,) and the CSR rows (n, d), all read.
    labels : ndarray, shape (n,)
        The head ``code``'s labels (:func:`head_losses`).
    row_weights : ndarray, shape (n,) or (0,)
        The example weights c of mean 1 (empty: all 1).
    code : int
    grad : ndarray, shape (P,)
        Overwritten with the gradient of the mean loss in theta.

    Returns
    -------
    float
        (1/n) sum_i c_i loss(f(x_i), y_i).
    """
    n = x_indptr.shape[0] - 1
    grad[:] = 0.0
    total = 0.0
    for start in range(0, n, FULL_CHUNK):
        rows = np.arange(start, min(start + FULL_CHUNK, n))
        total += loss_gradient(net, theta, x_indptr, x_indices, x_data, labels, row_weights,
                               rows, code, 1.0 / max(n, 1), grad)
    return total / max(n, 1)


@njit(cache=True)
def head_losses(code, scores, labels, row_weights, rows, delta, weight):
    """Losses of the scores (B, K) of rows with ``labels`` (n,), each times its example
    weight c (``row_weights`` (n,); empty: 1); delta = weight c d loss / d s.

    ``code`` is :data:`SOFTMAX` (labels are class indices 0..K-1) or a binary loss code on
    scores[:, 0]. Returns the sum of the B weighted losses.
    """
    total = 0.0
    batch, classes = scores.shape
    for b in range(batch):
        label = labels[rows[b]]
        c = 1.0 if row_weights.shape[0] == 0 else row_weights[rows[b]]
        if code == SOFTMAX:
            top = scores[b, 0]
            for k in range(1, classes):
                top = max(top, scores[b, k])
            norm = 0.0
            for k in range(classes):
                delta[b, k] = np.exp(scores[b, k] - top)
                norm += delta[b, k]
            target = int(label)
            total += c * (top + np.log(norm) - scores[b, target])
            for k in range(classes):
                delta[b, k] = weight * c * (delta[b, k] / norm - (1.0 if k == target else 0.0))
        else:
            total += c * loss_value(code, scores[b, 0], label)
            delta[b, 0] = weight * c * loss_slope(code, scores[b, 0], label)
    return total
