"""How a game starts (Cotter, Jiang, Sridharan 2019, Algorithms 1-2, with TFCO's
multiplier floor), and how a warm start resumes one where an earlier run ended (the
Result's ``resume``, docs/results.md#warm-starts)."""

from __future__ import annotations

import math

import numpy as np

from worker.algorithms.run.arrays import DOG_START
from worker.candidates.trajectory import GameEnd
from worker.kernels.games import (
    LAGRANGIAN,
    PROXY_EXTERNAL,
    PROXY_SWAP,
    GameConfig,
    GameState,
    stationary_distribution,
)
from worker.kernels.layout import (
    GRADIENT_SUM,
    ITERATION,
    N_COUNTERS,
    N_SCALARS,
    RADIUS,
    STEP_ADAGRAD_NORM,
)
from worker.kernels.random import seed_state

#: TFCO's ``minimum_multiplier_radius``: entries of M / lambda stay >= this / (m+1).
MINIMUM_RADIUS = 1e-3
#: The kernels' formulation code -> its regret as a Result's ``resume`` names it.
REGRETS = {LAGRANGIAN: None, PROXY_SWAP: "swap", PROXY_EXTERNAL: "external"}


def initial_multipliers(m: int, formulation: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lambda(1) (m+1,), log M (m+1, m+1) and log lambda (m+1,): lambda = e_0 (Lagrangian,
    whose lambda[1:] start at 0) or TFCO's near-objective start (proxy formulations)."""
    size = m + 1
    small = MINIMUM_RADIUS / size
    log_m = np.full((size, size), math.log(small))
    log_m[0, :] = math.log(1.0 - small * m)
    lam = np.zeros(size)
    lam[0] = 1.0
    if formulation == PROXY_SWAP:
        lam[:] = 1.0 / size
        stationary_distribution(log_m, lam)
    elif formulation == PROXY_EXTERNAL:
        lam[:] = np.exp(log_m[:, 0])
    return lam, log_m, np.ascontiguousarray(log_m[:, 0])


def initial_state(w0: np.ndarray, m: int, formulation: int, seed: int) -> GameState:
    """theta(1) = w0, :func:`initial_multipliers` and DoG's r_eps = DOG_START (1 + |w0|)."""
    lam, log_m, log_lam = initial_multipliers(m, formulation)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    scalars = np.zeros(N_SCALARS)
    scalars[RADIUS] = DOG_START * (1.0 + float(np.linalg.norm(w0)))
    return GameState(w=np.array(w0, dtype=np.float64), direction=np.zeros(w0.shape[0]),
                     values=np.zeros(m), lam=lam, log_m=log_m, log_lam=log_lam,
                     origin=np.array(w0, dtype=np.float64), counters=counters,
                     scalars=scalars, rng=seed_state(seed))


def resumed_game(end: GameEnd | None, formulation: int, state: GameState) -> bool:
    """Put a warm start's multipliers and AdaGrad sum (``end``, from the earlier Result's
    ``resume``) into ``state`` when they come from the same game (regret and number of
    constraints); whether they did. Algorithm 2's lambda-player then continues from where
    it stopped instead of TFCO's near-objective start."""
    if end is None or end.regret != REGRETS[formulation] or \
            end.lam.shape != state.lam.shape:
        return False
    state.lam[:] = end.lam
    state.log_m[:] = end.log_m
    state.log_lam[:] = end.log_lam
    if end.theta_diameter is not None:       # AdaGrad's sum belongs to its diameter
        state.scalars[GRADIENT_SUM] = end.gradient_sum
    return True


def game_end(state: GameState, cfg: GameConfig, formulation: int) -> GameEnd:
    """Where the game stopped, for a warm start to resume (:func:`resumed_game`)."""
    return GameEnd(REGRETS[formulation], state.lam.copy(), state.log_m.copy(),
                   state.log_lam.copy(),
                   float(cfg.eta_w) if cfg.step_rule == STEP_ADAGRAD_NORM else None,
                   float(state.scalars[GRADIENT_SUM]))
