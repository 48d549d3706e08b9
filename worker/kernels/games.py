"""The Lagrangian and proxy-Lagrangian games (Cotter, Jiang, Sridharan 2019, "Two-Player Games
for Efficient Non-Convex Constrained Optimization"), one compiled loop.

Constraints are ordered linear first (i < m_l, g_i = a_i.w - b_i, its own proxy), then rates
(a :class:`~worker.problem.rates.RateForm`: entries (k, weight, sign) per example, sign +1 for
1[s > 0] and -1 for 1[s <= 0], each indicator's surrogate an upper bound of it: the hinge
max(0, 1 + sign s), convex, or the ramp min(1, max(0, 1 + sign s)), non-convex; see
:mod:`worker.problem.rates`). lambda has m+1 entries, lambda[0] weighing the objective.

* LAGRANGIAN (Definition 1, Algorithm 3 in the appendix): theta by SGD on f + sum lambda_i g~_i,
  lambda by projected gradient ascent on {lambda >= 0, ||lambda||_1 <= R} with the same
  surrogate values, lambda[0] = 1: the game on the hinge-relaxed problem (pass the
  ``relaxed`` form).
* PROXY_SWAP (Definition 2, Algorithm 2): theta by SGD on lambda_1 f + sum lambda_{i+1} g~_i;
  the lambda-player sees the *true* constraint values and minimizes swap regret: the
  left-stochastic (m+1)x(m+1) matrix M is updated multiplicatively in the log domain,
  log M <- log M + eta_lambda [0, g] lambda' (line 7), columns renormalized (line 8, the KL
  projection), entries floored at ``floor`` as TFCO does; lambda = fix M, the stationary
  distribution, by power iteration warm-started at the previous lambda (line 3).
* PROXY_EXTERNAL: the same game with an external-regret lambda-player (multiplicative
  weights on the simplex), TFCO's ``regret_type="external"``.

Each iteration samples k_f examples for f and k_r rate examples uniformly (with replacement);
rate sums are scaled by n_r / k_r, so the constraint estimates are unbiased. f's subgradient,
the mean over the examples drawn (by weight), is scaled by ``GameConfig.f_scale``: 1, except
where f's rows are a sample that estimates a sum of shares (a rate objective on a game round's
rows, whose weights' sum is the scale).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from worker.kernels.gradient import stochastic_gradient
from worker.kernels.jit import kernel
from worker.kernels.layout import (
    CHECKS,
    GRADIENT_SUM,
    ITERATION,
    RADIUS,
    STEP_ADAGRAD_NORM,
    STEP_DOG,
)
from worker.kernels.objective import row_dot
from worker.kernels.random import randint

LAGRANGIAN = 0
PROXY_SWAP = 1
PROXY_EXTERNAL = 2

#: The indicators' upper bounds (``GameConfig.surrogate``).
SURROGATE_HINGE = 0
SURROGATE_RAMP = 1

#: Power iteration stops when a step changes lambda by at most this (l1).
STATIONARY_TOLERANCE = 1e-14
#: Plain power steps before (and after) falling back to repeated squaring.
PLAIN_POWER_STEPS = 200
SQUARINGS = 50

RateArrays = namedtuple("RateArrays", [
    "x_indptr", "x_indices", "x_data",                # rate examples, CSR (n_r, d)
    "wt_indptr", "wt_constraint", "wt_weight", "wt_sign",  # entries per example (n_r + 1,)
    "constant",                                       # (m_r,)
])

GameConfig = namedtuple("GameConfig", [
    "formulation",     # LAGRANGIAN, PROXY_SWAP or PROXY_EXTERNAL
    "eta_w",           # theta step eta_w / sqrt(t), or the multiplier of DoG's step
    "eta_lambda",      # constant lambda step
    "radius",          # R of the Lagrangian's multiplier set (inf: unbounded)
    "log_floor",       # log of the smallest entry of M / lambda (proxy formulations)
    "k_f", "k_r",      # examples per step for f and for the rates
    "surrogate",       # SURROGATE_HINGE or SURROGATE_RAMP
    "step_rule",       # layout.STEP_SCHEDULE; eta_w "auto": STEP_DOG, then STEP_ADAGRAD_NORM
    "f_scale",         # f's weight on the rows it is sampled from (1; a rate objective's
                       # share of a game round's rows: worker.algorithms.run.game_rounds)
], defaults=(1.0,))

GameState = namedtuple("GameState", [
    "w", "direction",  # theta (d,), step direction (d,)
    "values",          # the constraint values the lambda-player sees this step (m,)
    "lam",             # (m+1,): lambda[0] on the objective, lambda[1:] on the constraints
    "log_m",           # PROXY_SWAP: log M, (m+1, m+1), columns sum to 1 in exp
    "log_lam",         # PROXY_EXTERNAL: log lambda, (m+1,)
    "origin",          # theta(1) (d,), from which DoG measures its distance
    "counters", "scalars", "rng",  # scalars: layout's GRADIENT_SUM and RADIUS (DoG)
])


@njit(cache=True)
def project_multipliers(lam, radius):
    """lambda[1:] <- Euclidean projection onto {lambda >= 0, ||lambda||_1 <= radius}."""
    m = lam.shape[0] - 1
    total = 0.0
    for i in range(1, m + 1):
        lam[i] = max(lam[i], 0.0)
        total += lam[i]
    if total <= radius:
        return
    ordered = np.sort(lam[1:])[::-1]
    running = 0.0
    shift = 0.0
    for k in range(m):
        running += ordered[k]
        candidate = (running - radius) / (k + 1)
        if ordered[k] - candidate > 0:
            shift = candidate
    for i in range(1, m + 1):
        lam[i] = max(lam[i] - shift, 0.0)


@kernel
def normalize_log_columns(log_m, log_floor):
    """Each column of exp(log_m) onto the simplex (the KL projection of Algorithm 2, line 8),
    floored at exp(log_floor) like TFCO, then renormalized so that columns sum to 1 exactly
    (floored entries end within a factor 1 - size * floor of the floor)."""
    size = log_m.shape[0]
    for j in range(log_m.shape[1]):
        for floored in (True, False):
            top = log_m[0, j]
            for i in range(1, size):
                top = max(top, log_m[i, j])
            total = 0.0
            for i in range(size):
                total += np.exp(log_m[i, j] - top)
            shift = top + np.log(total)
            for i in range(size):
                log_m[i, j] -= shift
                if floored:
                    log_m[i, j] = max(log_m[i, j], log_floor)


@njit(cache=True)
def _power_steps(matrix, lam, count):
    """Up to ``count`` steps lam <- M lam / sum; True once a step changes lam by <= tol."""
    size = lam.shape[0]
    nxt = np.empty(size)
    for _ in range(count):
        total = 0.0
        for i in range(size):
            value = 0.0
            for j in range(size):
                value += matrix[i, j] * lam[j]
            nxt[i] = value
            total += value
        change = 0.0
        for i in range(size):
            value = nxt[i] / total
            change += abs(value - lam[i])
            lam[i] = value
        if change <= STATIONARY_TOLERANCE:
            return True
    return False


@njit(cache=True)
def stationary_distribution(log_m, lam):
    """lam <- the stationary distribution of M = exp(log_m) (M lam = lam), by power iteration.

    M is column-stochastic with entries >= exp(log_floor) > 0, so it is primitive and the
    iteration converges from any start; it is warm-started at the incoming lam, which the
    small lambda steps keep close, so a few steps usually suffice. When M is nearly reducible
    (second eigenvalue within ~1e-3 of 1) plain steps are slow; then lam is multiplied by
    M^(2^50), formed by repeated squaring (50 (m+1)^3 flops), and polished by plain steps.
    """
    matrix = np.exp(log_m)
    if _power_steps(matrix, lam, PLAIN_POWER_STEPS):
        return
    power = matrix.copy()
    for _ in range(SQUARINGS):
        power = power @ power
        power /= power.sum(axis=0)
    lam[:] = power @ lam
    lam /= lam.sum()
    _power_steps(matrix, lam, PLAIN_POWER_STEPS)


@njit(cache=True)
def swap_regret_update(log_m, lam, values, eta, log_floor):
    """Algorithm 2, lines 7-8 and 3: log M += eta [0, g] lam', project, lam = fix M."""
    size = lam.shape[0]
    for i in range(1, size):
        step = eta * values[i - 1]
        for j in range(size):
            log_m[i, j] += step * lam[j]
    normalize_log_columns(log_m, log_floor)
    stationary_distribution(log_m, lam)


@kernel
def external_regret_update(log_lam, lam, values, eta, log_floor):
    """Multiplicative weights on the simplex: log lam += eta [0, g], normalized, floored."""
    size = lam.shape[0]
    for i in range(1, size):
        log_lam[i] += eta * values[i - 1]
    normalize_log_columns(log_lam.reshape(size, 1), log_floor)
    for i in range(size):
        lam[i] = np.exp(log_lam[i])


@kernel
def _linear_constraints(p, s):
    """values[i] = g_i(w) for the linear rows; direction += lam[1+i] a_i."""
    m_l = p.rhs.shape[0]
    for i in range(m_l):
        s.values[i] = row_dot(p.a_indptr, p.a_indices, p.a_data, i, s.w) - p.rhs[i]
        weight = s.lam[1 + i]
        if weight != 0.0:
            for k in range(p.a_indptr[i], p.a_indptr[i + 1]):
                s.direction[p.a_indices[k]] += weight * p.a_data[k]
    s.counters[CHECKS] += m_l


@kernel
def rate_example(r, cfg, values, lam, first, i, score, share):
    """Example i (score s) of the rate constraints, sampled with weight ``share`` = n_r / k_r:
    adds its terms to ``values[first + k]`` (true indicators, or the surrogate for the
    Lagrangian) and returns d/ds of sum_k lam[1 + first + k] g~_k, the surrogate's
    (sub)gradient (the ramp's is 0 where it is flat, margin >= 1)."""
    ramp = cfg.surrogate == SURROGATE_RAMP
    coefficient = 0.0
    for e in range(r.wt_indptr[i], r.wt_indptr[i + 1]):
        k = r.wt_constraint[e]
        weight = share * r.wt_weight[e]
        sign = r.wt_sign[e]
        margin = 1.0 + sign * score
        if cfg.formulation == LAGRANGIAN:
            values[first + k] += weight * (min(max(0.0, margin), 1.0) if ramp
                                           else max(0.0, margin))
        elif score > 0 if sign > 0 else score <= 0:
            values[first + k] += weight
        if margin > 0 and not (ramp and margin >= 1.0):
            coefficient += lam[1 + first + k] * weight * sign
    return coefficient


@kernel
def _rate_constraints(r, cfg, s, m_l):
    """Rate values from k_r sampled rows (unbiased: scaled by n_r / k_r), after the m_l
    linear ones; direction += the gradient of sum_k lam[1+m_l+k] g~_k (:func:`rate_example`)."""
    m_r = r.constant.shape[0]
    n_r = r.wt_indptr.shape[0] - 1
    if m_r == 0:
        return
    for k in range(m_r):
        s.values[m_l + k] = r.constant[k]
    share = n_r / cfg.k_r
    for _ in range(cfg.k_r):
        i = randint(s.rng, n_r)
        score = row_dot(r.x_indptr, r.x_indices, r.x_data, i, s.w)
        coefficient = rate_example(r, cfg, s.values, s.lam, m_l, i, score, share)
        if coefficient != 0.0:
            for q in range(r.x_indptr[i], r.x_indptr[i + 1]):
                s.direction[r.x_indices[q]] += coefficient * r.x_data[q]
    s.counters[CHECKS] += cfg.k_r


@njit(cache=True)
def multiplier_step(cfg, lam, log_m, log_lam, values):
    """The lambda-player's step on the constraint values g (m,) it saw: projected ascent
    (Lagrangian), Algorithm 2's swap-regret update, or multiplicative weights."""
    if cfg.formulation == LAGRANGIAN:
        for i in range(1, lam.shape[0]):
            lam[i] += cfg.eta_lambda * values[i - 1]
        project_multipliers(lam, cfg.radius)
    elif cfg.formulation == PROXY_SWAP:
        swap_regret_update(log_m, lam, values, cfg.eta_lambda, cfg.log_floor)
    else:
        external_regret_update(log_lam, lam, values, cfg.eta_lambda, cfg.log_floor)


@kernel(inline="always")
def theta_step(cfg, s, t):
    """The theta-player's step at iteration t, by ``cfg.step_rule``: eta_w / sqrt(t); or,
    adding this step's |direction|^2 to the sum, AdaGrad's norm step with diameter eta_w,
    eta_w / sqrt(sum_{s <= t} |g_s|^2) (Duchi, Hazan & Singer, JMLR 2011; McMahan & Streeter,
    COLT 2010); or distance over gradients (Ivgi, Hinder & Carmon, ICML 2023, eq. (1)), the
    same with the diameter eta_w r_t."""
    if cfg.step_rule != STEP_DOG and cfg.step_rule != STEP_ADAGRAD_NORM:
        return cfg.eta_w / np.sqrt(t)
    total = 0.0
    for j in range(s.direction.shape[0]):
        total += s.direction[j] * s.direction[j]
    s.scalars[GRADIENT_SUM] += total
    if s.scalars[GRADIENT_SUM] <= 0.0:
        return 0.0
    diameter = cfg.eta_w * s.scalars[RADIUS] if cfg.step_rule == STEP_DOG else cfg.eta_w
    return diameter / np.sqrt(s.scalars[GRADIENT_SUM])


@kernel(inline="always")
def _track_radius(s):
    """r_t = max(r_t, |theta - theta(1)|) after a DoG step."""
    total = 0.0
    for j in range(s.w.shape[0]):
        total += (s.w[j] - s.origin[j]) ** 2
    s.scalars[RADIUS] = max(s.scalars[RADIUS], np.sqrt(total))


@njit(cache=True)
def game_steps(p, r, cfg, s, n_steps):
    """n_steps of the game: a theta step on the (proxy-)Lagrangian, then a lambda step.

    Parameters
    ----------
    p : ProblemArrays
        Objective, linear constraints (m_l rows) and the box W.
    r : RateArrays
        Rate constraints (m_r of them; m = m_l + m_r).
    cfg : GameConfig
    s : GameState
        Mutated: theta(t) -> theta(t+1), lambda(t) -> lambda(t+1), counters, rng.
    n_steps : int
    """
    m_l = p.rhs.shape[0]
    d = s.w.shape[0]
    for _ in range(n_steps):
        t = s.counters[ITERATION]
        stochastic_gradient(p, s.w, cfg.k_f, s.rng, s.counters, s.direction)
        weight_f = s.lam[0] * cfg.f_scale
        for j in range(d):
            s.direction[j] *= weight_f
        _linear_constraints(p, s)
        _rate_constraints(r, cfg, s, m_l)
        eta = theta_step(cfg, s, t)
        for j in range(d):
            s.w[j] = min(max(s.w[j] - eta * s.direction[j], p.lower[j]), p.upper[j])
        if cfg.step_rule == STEP_DOG:
            _track_radius(s)
        multiplier_step(cfg, s.lam, s.log_m, s.log_lam, s.values)
        s.counters[ITERATION] = t + 1
