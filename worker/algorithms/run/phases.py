"""Running the LightTouch-family loop in phases: snapshots, automatic gamma, the ``eta_w``
warm-up, and ``iterations: "auto"`` (run until the answer stops improving or time is up).

``iterations: "auto"`` runs doubling stages after the warm-up: stage k ends at iteration
T_k = 2 T_(k-1). With the suffix averages of :meth:`~worker.algorithms.run.driver.Driver.
keep_average_recent`, the average at T_k covers the stage's iterates; after each stage the
rule of :mod:`worker.algorithms.run.stopping` decides (a certified gap on linear constraints, or
the doubling-stage estimate), or the time limit ends the run.
"""

from __future__ import annotations

import time

import numpy as np

from worker.algorithms.run.driver import Driver, snapshot_iterations
from worker.algorithms.run.penalty import (
    GAMMA_FREE_NONZEROS,
    GAMMA_SHARE,
    FitBudget,
    FitStopped,
    gamma_checkpoints,
    multiplier_mass,
    penalized_objective,
    raised_gamma,
    rescaled_step,
)
from worker.algorithms.run.step_rule import warm_up, warmup_end
from worker.algorithms.run.stopping import CertifiedStages
from worker.candidates.snapshots import Candidates
from worker.kernels.constraints import max_violation
from worker.kernels.distribution import rebase_distribution
from worker.kernels.iteration import restart_average
from worker.kernels.layout import CHECKS, ITERATION, STEP_SCHEDULE

#: The warm-up of an open-ended run: AUTO_WARMUP_PER_ROW iterations per coordinate and
#: constraint (each warm-up of the race), at least AUTO_WARMUP_MIN.
AUTO_WARMUP_PER_ROW = 4
AUTO_WARMUP_MIN = 2**14
#: Stages (after the first) in which automatic gamma still re-estimates.
GAMMA_STAGES = 2


def run_phase(driver: Driver, cfg, start: int, stop: int, count: int,
              candidates: Candidates, *, auto_gamma: bool = False, after_each=None):
    """Run to ``stop``, snapshotting ``count`` candidates and, if ``auto_gamma``, raising
    gamma at :func:`~worker.algorithms.run.penalty.gamma_checkpoints`.

    Returns (the final config, whether the run finished before the deadline). A run the
    deadline stops is snapshotted where it stopped, so even a deadline inside the warm-up
    leaves a candidate for the shrinking LP.
    """
    with_iterate, first = count >= 2, start
    if cfg.step_rule != STEP_SCHEDULE:                  # eta_w "auto": measure it first
        cfg = warm_up(driver, cfg, warmup_end(start, stop), after_each)
        first = driver.iteration
    snapshots = snapshot_iterations(first, stop, max(1, count // 2 if with_iterate else 1))
    checkpoints = gamma_checkpoints(first, stop) if auto_gamma else []
    for iteration in sorted(set(snapshots) | set(checkpoints)):
        finished = driver.run(cfg, iteration, after_each)
        if iteration in snapshots or not finished:
            driver.snapshot(candidates, with_iterate)
        if not finished:
            return cfg, False
        if iteration in checkpoints:
            cfg = retune_gamma(driver, cfg)
        elif iteration in snapshots:
            driver.keep_average_recent()
    return cfg, True


def run_to_tolerance(driver: Driver, cfg, count: int, candidates: Candidates, *,
                     tolerance: float, auto_gamma: bool = False, after_each=None):
    """``iterations: "auto"``: doubling stages until the stopping rule of
    :mod:`worker.algorithms.run.stopping` fires or the deadline, ``count`` candidates per stage
    (the pipeline keeps the most recent ones for the shrinking LP).

    Returns (the final config, stats: ``stopped_by`` "certificate", "converged" or
    "time_limit", ``stages``, and the rule's own: ``estimated_gap`` once three stages have
    finished, ``dual_bound`` and ``certified_gap`` once a certificate was derived).
    """
    stage_end = max(AUTO_WARMUP_MIN, AUTO_WARMUP_PER_ROW * (driver.arrays.lower.shape[0]
                                                            + driver.arrays.rhs.shape[0]))
    if cfg.step_rule != STEP_SCHEDULE:
        cfg = warm_up(driver, cfg, driver.iteration + stage_end, after_each)
    rule = CertifiedStages(driver.arrays, driver.problem, tolerance)
    stopped_by, stages = "time_limit", 0
    while True:
        start, stage_end = driver.iteration, 2 * max(driver.iteration, stage_end)
        driver.loop.total_iterations = stage_end
        gamma = cfg.gamma
        cfg, finished = run_phase(driver, cfg, start, stage_end, count, candidates,
                                  auto_gamma=auto_gamma and stages < GAMMA_STAGES,
                                  after_each=after_each)
        stages += 1
        if not finished:
            break
        if cfg.gamma != gamma:          # another penalty: earlier values do not compare
            rule.estimate.restart()
        average = driver.average()
        decision = rule.stop(average, penalized_objective(driver.arrays, average, cfg.gamma),
                             driver.loop.seconds,
                             candidates, driver.iteration,
                             int(driver.state.counters[CHECKS]))
        if decision is not None:
            stopped_by = decision
            break
    return cfg, {"stopped_by": stopped_by, "stages": stages} | rule.stats()


def retune_gamma(driver: Driver, cfg):
    """Raise gamma to the multiplier estimate at the running average (restarting it), unless
    the fit would pass its budget: the deadline, or its share of the nonzeros the run's
    constraint checks touched (:data:`~worker.algorithms.run.penalty.GAMMA_SHARE`; counted,
    so the same on every machine). gamma then stays."""
    problem = driver.problem
    row_nonzeros = problem.constraints.matrix.nnz / max(problem.m, 1)
    checked = float(driver.state.counters[CHECKS]) * row_nonzeros
    allowance = max(GAMMA_FREE_NONZEROS, GAMMA_SHARE * checked) - driver.gamma_fit_nonzeros
    if allowance <= 0:
        return cfg
    average, began = driver.average(), time.perf_counter()
    budget = FitBudget(driver.loop.deadline, allowance)
    try:
        mass, gradient_norm = multiplier_mass(driver.arrays, problem, average, budget)
    except FitStopped:
        return cfg
    finally:
        driver.gamma_fit_nonzeros += budget.used
        driver.gamma_fit_s += time.perf_counter() - began
    violation = float(max_violation(driver.arrays, average))
    driver.state.counters[CHECKS] += driver.problem.m
    gamma = raised_gamma(cfg.gamma, mass, violation, max(1.0, float(np.abs(average).max())))
    if gamma > cfg.gamma:
        t = int(driver.state.counters[ITERATION])
        rebase_distribution(cfg, driver.state, t)
        restart_average(driver.state, driver.state.w)
        cfg = cfg._replace(gamma=gamma, eta_w=rescaled_step(cfg.eta_w, cfg.gamma, gamma,
                                                            gradient_norm))
    driver.gamma_history.append((driver.iteration, cfg.gamma))
    return cfg
