"""The Lagrangian and proxy-Lagrangian games with a network theta-player (Cotter, Jiang,
Sridharan 2019, §5 "practical procedure" and §6.1).

The theta-player differentiates the losses of q objective terms and the rate constraints
through the network (:mod:`worker.kernels.network`) and takes AdaGrad steps (§6: "the theta
and lambda-updates both used AdaGrad"); the lambda-player is the linear games' own
(:func:`worker.kernels.games.multiplier_step`). Constraint values are ordered rates first
(m_r), then, for a robust objective min max_i L_i (``cfg.robust``), the q slack constraints
L_i(theta) - xi <= 0 of the paper's Equation 3, whose objective is the slack xi in
[0, ``cfg.slack_upper``], then the group-loss constraints L_G(theta) - bound_G <= 0; a single
term is the objective itself, weighted by lambda[0]. Every loss, objective or constraint, is a
term of :class:`NetworkTerms`: its ``slot`` says which multiplier weighs it (-1: lambda[0])
and its ``bound`` what its constraint subtracts (NaN: the slack xi).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from worker.kernels.games import multiplier_step, rate_example
from worker.kernels.layout import (
    CHECKS,
    GRADIENT_SAMPLES,
    GRADIENT_SUM,
    ITERATION,
    RADIUS,
    STEP_DOG,
)
from worker.kernels.network import backward, forward, loss_gradient
from worker.kernels.random import randint, search_cumulative, uniform

#: The rows' weights inside a minibatch drawn by weight: each counts once (empty: all 1).
_UNIT = np.zeros(0)

NetworkTerms = namedtuple("NetworkTerms", [
    "x_indptr", "x_indices", "x_data",  # every term's rows stacked, CSR (N, d)
    "labels",                           # (N,): class indices (softmax) or the loss's labels
    "weights",                          # (N,): example weights, each term's of mean 1; (0,): 1
    "cumulative",                       # (N,): each term's running sums of its weights; (0,)
    "row_at",                           # (q+1,) int64: term i owns rows row_at[i]..[i+1]-1
    "code",                             # (q,) int64: head of each term (network.SOFTMAX or a loss)
    "l1", "l2",                         # (q,) regularizer weights of each term
    "slot",                             # (q,) int64: constraint index of the term, -1: lambda[0]
    "bound",                            # (q,): the constraint's bound, NaN: the slack xi
])

NetworkConfig = namedtuple("NetworkConfig", [
    "game",         # GameConfig (formulation, eta_w = AdaGrad's step, eta_lambda, ..., k_f, k_r)
    "robust",       # True: objective xi with slack constraints L_i - xi <= 0
    "slack_upper",  # the largest xi
    "slack_eta",    # AdaGrad's step for xi
])

NetworkState = namedtuple("NetworkState", [
    "theta", "direction", "squares",    # parameters, step direction, AdaGrad's sums (P,)
    "origin", "scalars",                # DoG's start (P,); layout's GRADIENT_SUM and RADIUS
    "slack", "slack_squares",           # xi and its AdaGrad sum, (1,) each
    "values",                           # constraint values the lambda-player sees (m,)
    "lam", "log_m", "log_lam",          # as GameState
    "losses",                           # each term's last minibatch loss (q,), bounded too
    "counters", "rng",
])


@njit(cache=True)
def _sample(rng, start, stop, count):
    """``count`` row indices drawn uniformly with replacement from start..stop-1."""
    rows = np.empty(count, dtype=np.int64)
    for b in range(count):
        rows[b] = start + randint(rng, stop - start)
    return rows


@njit(cache=True)
def _sample_term(rng, terms, i, count):
    """``count`` rows of term i drawn with replacement, each with probability its weight over
    the term's total (uniformly without weights): a binary search of a uniform in the
    term's running sums, stepping back over rows of weight 0 at the end."""
    start, stop = terms.row_at[i], terms.row_at[i + 1]
    if terms.cumulative.shape[0] == 0:
        return _sample(rng, start, stop, count)
    rows = np.empty(count, dtype=np.int64)
    for b in range(count):
        target = uniform(rng) * terms.cumulative[stop - 1]
        low = start + search_cumulative(terms.cumulative[start:stop], stop - start, target)
        while terms.weights[low] == 0.0 and low > start:
            low -= 1
        rows[b] = low
    return rows


@njit(cache=True)
def _term_gradients(net, terms, cfg, s):
    """direction += sum_i weight_i grad L_i on k_f rows of each term (lambda[0] or the
    multiplier of its ``slot``); the constraint values of the slotted terms (L_i - xi or
    L_i - bound_i); the slack's gradient lambda[0] - sum of the robust terms' weights (robust)
    or 0."""
    k_f = cfg.game.k_f
    slack_slope = s.lam[0] if cfg.robust else 0.0
    for i in range(terms.code.shape[0]):
        slot = terms.slot[i]
        weight = s.lam[0] if slot < 0 else s.lam[1 + slot]
        rows = _sample_term(s.rng, terms, i, k_f)
        loss = loss_gradient(net, s.theta, terms.x_indptr, terms.x_indices, terms.x_data,
                             terms.labels, _UNIT, rows, terms.code[i], weight / k_f,
                             s.direction) / k_f
        l1, l2 = terms.l1[i], terms.l2[i]
        if l1 > 0.0 or l2 > 0.0:
            for j in range(s.theta.shape[0]):
                value = s.theta[j]
                loss += 0.5 * l2 * value * value + l1 * abs(value)
                s.direction[j] += weight * (l2 * value + l1 * np.sign(value))
        s.losses[i] = loss
        if slot >= 0 and np.isnan(terms.bound[i]):
            s.values[slot] = loss - s.slack[0]
            slack_slope -= weight
        elif slot >= 0:
            s.values[slot] = loss - terms.bound[i]
        s.counters[GRADIENT_SAMPLES] += k_f
    return slack_slope


@njit(cache=True)
def _rate_gradients(net, r, cfg, s):
    """Rate values from k_r sampled rows (scaled by n_r / k_r) and direction += the gradient
    of sum_k lambda[1+k] g~_k through the network's score (output 0)."""
    m_r = r.constant.shape[0]
    if m_r == 0:
        return
    k_r = cfg.game.k_r
    n_r = r.wt_indptr.shape[0] - 1
    s.values[:m_r] = r.constant
    rows = _sample(s.rng, 0, n_r, k_r)
    dense, outputs = forward(net, s.theta, r.x_indptr, r.x_indices, r.x_data, rows)
    scores = outputs[-1]
    delta = np.zeros_like(scores)
    share = n_r / k_r
    for b in range(k_r):
        delta[b, 0] = rate_example(r, cfg.game, s.values, s.lam, 0, rows[b], scores[b, 0],
                                   share)
    backward(net, s.theta, r.x_indptr, r.x_indices, r.x_data, rows, dense, outputs,
             delta, s.direction)
    s.counters[CHECKS] += k_r


@njit(cache=True)
def _adagrad(value, gradient, squares, eta, low, high):
    """One diagonal AdaGrad step of a coordinate, clipped to [low, high]; none while the
    sum of squares is 0 (no gradient yet, or gradients so small, e.g. weighted by
    multipliers near 0, that their squares underflow)."""
    if squares <= 0.0:
        return value
    return min(max(value - eta * gradient / np.sqrt(squares), low), high)


@njit(cache=True)
def _dog_step(s, lower, upper):
    """One step of distance over gradients (Ivgi, Hinder & Carmon 2023) on theta by
    ``s.direction``: eta_t = r_t / sqrt(sum_s |g_s|^2), r_t the largest distance from
    ``s.origin`` so far (at least its start r_eps), clipped to the box."""
    total = 0.0
    for j in range(s.theta.shape[0]):
        total += s.direction[j] * s.direction[j]
    s.scalars[GRADIENT_SUM] += total
    if s.scalars[GRADIENT_SUM] <= 0.0:
        return
    eta = s.scalars[RADIUS] / np.sqrt(s.scalars[GRADIENT_SUM])
    distance = 0.0
    for j in range(s.theta.shape[0]):
        s.theta[j] = min(max(s.theta[j] - eta * s.direction[j], lower[j]), upper[j])
        distance += (s.theta[j] - s.origin[j]) ** 2
    s.scalars[RADIUS] = max(s.scalars[RADIUS], np.sqrt(distance))


@njit(cache=True)
def network_game_steps(net, terms, r, lower, upper, cfg, s, n_steps):
    """n_steps of the game: an AdaGrad theta (and xi) step (a DoG step when
    ``cfg.game.step_rule`` is STEP_DOG: the probe of ``eta_w: "auto"``), then the
    lambda-player's step.

    Parameters
    ----------
    net : NetworkArrays
    terms : NetworkTerms
        The objective's terms (one unless ``cfg.robust``), then the group losses.
    r : RateArrays
        Rate constraints on the network's score (m_r of them, possibly 0).
    lower, upper : ndarray, shape (P,)
        The box of the parameters.
    cfg : NetworkConfig
    s : NetworkState
        Mutated: theta(t) -> theta(t+1), xi, lambda, counters, rng.
    n_steps : int
    """
    eta = cfg.game.eta_w
    for _ in range(n_steps):
        s.direction[:] = 0.0
        slack_slope = _term_gradients(net, terms, cfg, s)
        _rate_gradients(net, r, cfg, s)
        if cfg.game.step_rule == STEP_DOG:
            _dog_step(s, lower, upper)
        else:
            for j in range(s.theta.shape[0]):
                g = s.direction[j]
                s.squares[j] += g * g
                s.theta[j] = _adagrad(s.theta[j], g, s.squares[j], eta, lower[j], upper[j])
        if cfg.robust:
            s.slack_squares[0] += slack_slope * slack_slope
            s.slack[0] = _adagrad(s.slack[0], slack_slope, s.slack_squares[0], cfg.slack_eta,
                                  0.0, cfg.slack_upper)
        multiplier_step(cfg.game, s.lam, s.log_m, s.log_lam, s.values)
        s.counters[ITERATION] += 1
