"""A dense stochastic subgradient of the objective f, for the loops that step every coordinate.

The LightTouch loop (:mod:`worker.kernels.iteration`) keeps sparse touched-coordinate lists;
the Epro loops and the game loops step all d coordinates (Epro needs l2 > 0, which makes
every step dense anyway), so they take this simpler dense form. Epro-ORDA handles the
regularizer l1 ||w||_1 + (l2/2)||w||^2 by its proximal steps and takes the loss part alone.
"""

from __future__ import annotations

from worker.kernels.jit import kernel
from worker.kernels.layout import GRADIENT_SAMPLES
from worker.kernels.objective import add_example_gradient, sample_example, start_gradient


@kernel
def sampled_gradient(p, w, k_f, rng, counters, regularized, out):
    """out = a stochastic subgradient of f at w: the mean of k_f sampled loss subgradients.

    Parameters
    ----------
    p : ProblemArrays
    w : ndarray, shape (d,)
    k_f : int
        Examples drawn with replacement, each with probability c_i / n
        (:func:`~worker.kernels.objective.sample_example`: uniformly without weights;
        ignored for a quadratic objective, whose gradient Qw + c is exact and counts as one
        sample).
    rng : ndarray, uint64, shape (2,)
        Explicit RNG state (:mod:`worker.kernels.random`), advanced k_f times.
    counters : ndarray, int64
        ``counters[GRADIENT_SAMPLES]`` is increased by the samples drawn.
    regularized : bool
        Whether to add the regularizer's subgradient l2 w + l1 sign(w).
    out : ndarray, shape (d,)
        Overwritten with ``[l2 w + l1 sign(w)] + (Qw + c  or  (1/k_f) sum_i slope_i x_i)``.
    """
    start_gradient(p, w, out, regularized)
    if p.quadratic:
        counters[GRADIENT_SAMPLES] += 1
        return
    for _ in range(k_f):
        add_example_gradient(p, sample_example(p, rng), w, 1.0 / k_f, out)
    counters[GRADIENT_SAMPLES] += k_f


@kernel
def stochastic_gradient(p, w, k_f, rng, counters, out):
    """out = a stochastic subgradient of the whole objective f (see :func:`sampled_gradient`)."""
    sampled_gradient(p, w, k_f, rng, counters, True, out)


@kernel
def stochastic_loss_gradient(p, w, k_f, rng, counters, out):
    """out = a stochastic subgradient of f without its regularizer: the mean loss (or
    (1/2) w'Qw + c'w) alone (see :func:`sampled_gradient`)."""
    sampled_gradient(p, w, k_f, rng, counters, False, out)
