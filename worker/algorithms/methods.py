"""The algorithms as Python drivers of the one compiled loop, and the ``auto`` rule.

================  ==========================================================================
algorithm         what runs (LightTouch paper numbering)
================  ==========================================================================
fulltouch         Algorithm 1: SGD on f + gamma max(0, max_i g_i), all m checked each step
lighttouch        Algorithm 4 (practical LightTouch; Algorithm 2 with fixed minibatches):
                  sampled constraints i ~ p, multiplicative p-update, §5.2 minibatching,
                  §5.1 aggregation, dense or lazy (sublinear) p-update
midtouch          Algorithm 3: T1 FullTouch steps, then LightTouch with k = 1 from their mean
projected_sgd     SGD with an exact projection onto W ∩ {g <= 0} after every step
epro_sgd          Epro paper, Algorithm 1 (:mod:`.epro`): doubling epochs of constant-step SGD
                  on f + lambda [max_i g_i]_+, one exact projection per epoch
epro_orda         Epro paper, Algorithm 3 (:mod:`.epro_orda`): the same epochs running ORDA
                  (Algorithm 2) with exact proximal steps on l1 ||w||_1 + (l2/2)||w||^2
lagrangian        Two-player games paper (:mod:`.games`): Lagrangian game on the
                  hinge-relaxed problem, projected gradient ascent on lambda
proxy_lagrangian  Two-player games paper, Algorithm 2: theta on proxy constraints, swap-regret
                  lambda-player on the true ones (rate constraints need one of these two)
================  ==========================================================================

``auto``: proxy_lagrangian when there are rate constraints; else FullTouch when m <= 16
(checking everything is as cheap as sampling, paper §3.2's k > m case), LightTouch
(Algorithm 4) otherwise; but Epro-SGD instead of FullTouch when the
objective is strongly convex (l2 > 0) and m <= 16, and Epro-ORDA instead of Epro-SGD when
it also has an l1 term (l1 > 0). Epro checks all m constraints every
step, as FullTouch does, so it is only chosen where FullTouch would be; there its
ceil(log2(T/8 + 1)) projections are QPs with at most 16 rows (milliseconds each), far
cheaper than the epochs they end, and they buy the O(1/T) rate of Theorems 1 and 3.
With l1 > 0 the other algorithms step on the subgradient l1 sign(w), whose iterates
oscillate around zero; ORDA's proximal steps put coordinates at or next to zero, and it
measured 7-19x closer to the optimum than Epro-SGD at every budget from 10^3 to 3 10^5
(bench/results/epro_rate.json, ``l1`` curves).
``p_update: auto`` is lazy (one constraint per group) when m <= 1024 and dense with
``aggregate: auto`` = round(sqrt(m)) groups otherwise, balancing the O(G) p-update against
the m/G checks of a group. The lazy update costs O(#groups with mu > 0) per iteration;
on the paper's lattice (m = 24,576) thousands stay slightly violated, and aggregation
measured 6-20x faster (bench/results/lattice_bench.json).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from worker.algorithms.arrays import new_state, problem_arrays, run_config
from worker.algorithms.driver import Candidates, Driver
from worker.algorithms.game_options import GameOptions
from worker.algorithms.loop import ProgressCallback
from worker.algorithms.phases import run_phase, run_to_tolerance
from worker.algorithms.svrg_schedule import SvrgOptions
from worker.errors import SpecError
from worker.kernels.distribution import init_distribution
from worker.kernels.iteration import replace_iterate, restart_average
from worker.kernels.layout import (
    ITERATION,
    K_G_TOTAL,
    K_P_TOTAL,
    MODE_FULL,
    MODE_LIGHT,
    MODE_PLAIN,
    STEP_DOG,
    STEP_SCHEDULE,
    ProblemArrays,
)
from worker.problem.compiled import CompiledProblem
from worker.projection import project

FULLTOUCH_MAX_M = 16
#: The algorithms that handle rate constraints (:mod:`.games`).
GAMES = ("lagrangian", "proxy_lagrangian")


@dataclass(frozen=True)
class SolverOptions:
    """Plain solver settings (mirrors ``spec.solver``; ``minibatch=None`` means automatic)."""

    algorithm: str = "auto"
    iterations: int = 200_000
    #: ``iterations: "auto"``: FullTouch, LightTouch and projected SGD run until the estimated
    #: gap is within ``tolerance`` or the time limit (see ``phases``); the other algorithms
    #: take ``iterations`` (the default budget).
    until_converged: bool = False
    tolerance: float = 1e-3
    time_limit_s: float = 600.0
    seed: int = 0
    gamma: float | None = None  # None: automatic (see worker.algorithms.penalty)
    eta_w: float | None = None  # None: automatic (DoG steps, or 1 / (l2 t) if strongly convex)
    eta_p: float = 0.0625
    minibatch: tuple[int, int, int] | None = None
    aggregate: int | None = None
    p_update: str = "auto"
    candidates: int = 100
    svrg: SvrgOptions = SvrgOptions()
    game: GameOptions = GameOptions()


@dataclass
class Trajectory:
    """What an algorithm leaves for shrinking: candidates, counters, what was chosen, and
    the kernel arrays it ran on (reused to score the candidates)."""

    algorithm: str
    candidates: Candidates
    arrays: ProblemArrays
    stats: dict = field(default_factory=dict)
    #: weights (C,) of the algorithm's own mixture of its candidates (the games' theta-bar,
    #: Theorems 2-3), reported next to the shrunk mixture; None for the other algorithms.
    baseline: np.ndarray | None = None


def choose_algorithm(problem: CompiledProblem, requested: str) -> str:
    """Resolve ``auto`` (see the module docstring)."""
    if requested != "auto":
        return requested
    if problem.rates is not None:
        return "proxy_lagrangian"
    if problem.m <= FULLTOUCH_MAX_M:
        if problem.objective.l2 > 0:
            return "epro_orda" if problem.objective.l1 > 0 else "epro_sgd"
        return "fulltouch"
    return "lighttouch"


AGGREGATE_ABOVE_M = 1024


def lazy_update(m: int, p_update: str) -> bool:
    """Whether the p-update is lazy (see the module docstring for ``auto``)."""
    return p_update == "lazy" or (p_update == "auto" and m <= AGGREGATE_ABOVE_M)


def group_count(m: int, aggregate: int | None, lazy: bool) -> int:
    """Number of constraint groups G (paper §5.1)."""
    if aggregate is not None:
        return max(1, min(aggregate, m)) if m else 0
    if lazy or m <= AGGREGATE_ABOVE_M:
        return m
    return max(1, round(math.sqrt(m)))


def run_algorithm(problem: CompiledProblem, options: SolverOptions,
                  progress: ProgressCallback | None = None) -> Trajectory:
    """Run the chosen algorithm; return candidates for the shrinking LP and the counters."""
    name = choose_algorithm(problem, options.algorithm)
    if problem.rates is not None and name not in GAMES:
        raise SpecError.at("solver.algorithm", f"{name} cannot handle rate constraints (they "
                           "have no gradient); choose proxy_lagrangian, lagrangian or auto")
    started = time.perf_counter()
    from worker.algorithms import epro, epro_orda, games, svrg_ol  # need SolverOptions

    runner = {"fulltouch": _fulltouch, "lighttouch": _lighttouch, "midtouch": _midtouch,
              "projected_sgd": _projected_sgd, "epro_sgd": epro.run_epro_sgd,
              "epro_orda": epro_orda.run_epro_orda,
              "svrg_ol": svrg_ol.run_svrg_ol, "lagrangian": games.run_lagrangian,
              "proxy_lagrangian": games.run_proxy_lagrangian}[name]
    trajectory = runner(problem, options, progress, started + options.time_limit_s)
    trajectory.stats["solve_s"] = time.perf_counter() - started
    return trajectory


def _start_point(problem: CompiledProblem) -> np.ndarray:
    """w(1) = clip of 0 to W."""
    return np.clip(np.zeros(problem.d), problem.lower, problem.upper)


def _finish(name: str, driver: Driver, candidates: Candidates, cfg, **extra) -> Trajectory:
    stats = driver.stats() | extra
    stats["stopped_by_time_limit"] = driver.timed_out
    stats["gamma"] = float(cfg.gamma)
    stats["eta_w"] = float(cfg.eta_w)
    stats.update(driver.step_stats or {})
    return Trajectory(name, candidates, driver.arrays, stats)


def _run(driver: Driver, cfg, options: SolverOptions, candidates: Candidates, *,
         auto_gamma: bool = False, after_each=None):
    """The whole run of a one-phase algorithm: ``options.iterations`` iterations, or until
    converged (``iterations: "auto"``). Returns (the final config, stats of the budget)."""
    if options.until_converged:
        return run_to_tolerance(driver, cfg, options.candidates, candidates,
                                tolerance=options.tolerance, auto_gamma=auto_gamma,
                                after_each=after_each)
    cfg, finished = run_phase(driver, cfg, 0, options.iterations, options.candidates,
                              candidates, auto_gamma=auto_gamma, after_each=after_each)
    return cfg, {"stopped_by": "iterations" if finished else "time_limit"}


def _light_stats(driver: Driver, iterations: int) -> dict:
    counters = driver.state.counters
    return {"mean_k_g": float(counters[K_G_TOTAL]) / max(iterations, 1),
            "mean_k_p": float(counters[K_P_TOTAL]) / max(iterations, 1)}


def _driver(problem, arrays, state, options, progress, deadline) -> Driver:
    return Driver(arrays, state, deadline, progress, options.iterations, problem=problem)


def step_scale(options: SolverOptions) -> float:
    """eta_w: as given, or 1 when automatic (then a multiplier of the DoG step or of
    1 / (l2 t))."""
    return 1.0 if options.eta_w is None else options.eta_w


def _step_rule(problem: CompiledProblem, options: SolverOptions) -> int:
    """STEP_DOG marks ``eta_w: "auto"`` on a non-strongly-convex objective: the phase starts
    with the warm-ups of :mod:`worker.algorithms.step_rule`."""
    return STEP_DOG if options.eta_w is None and problem.objective.l2 == 0 else STEP_SCHEDULE


def _initial_gamma(options: SolverOptions) -> float:
    return 1.0 if options.gamma is None else options.gamma


def _fulltouch(problem, options, progress, deadline) -> Trajectory:
    arrays = problem_arrays(problem, problem.m)
    cfg = run_config(arrays, mode=MODE_FULL, gamma=_initial_gamma(options),
                     eta_w=step_scale(options), eta_p=options.eta_p,
                     step_rule=_step_rule(problem, options),
                     strong_convexity=problem.objective.l2, minibatch=options.minibatch,
                     lazy=False)
    state = new_state(arrays, _start_point(problem), options.seed)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    candidates = Candidates()
    cfg, budget = _run(driver, cfg, options, candidates, auto_gamma=options.gamma is None)
    return _finish("fulltouch", driver, candidates, cfg, **budget)


def _lighttouch(problem, options, progress, deadline) -> Trajectory:
    lazy = lazy_update(problem.m, options.p_update)
    groups = group_count(problem.m, options.aggregate, lazy)
    arrays = problem_arrays(problem, groups)
    cfg = run_config(arrays, mode=MODE_LIGHT, gamma=_initial_gamma(options),
                     eta_w=step_scale(options), eta_p=options.eta_p,
                     step_rule=_step_rule(problem, options),
                     strong_convexity=problem.objective.l2, minibatch=options.minibatch,
                     lazy=lazy)
    state = new_state(arrays, _start_point(problem), options.seed)
    init_distribution(arrays, cfg, state, state.w, 1)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    candidates = Candidates()
    cfg, budget = _run(driver, cfg, options, candidates, auto_gamma=options.gamma is None)
    return _finish("lighttouch", driver, candidates, cfg, **budget, groups=groups,
                   p_update="lazy" if lazy else "dense",
                   **_light_stats(driver, driver.iteration))


def midtouch_phases(m: int, iterations: int) -> tuple[int, int]:
    """(T1, T2) with T1 ≈ m tau^2 and T2 ≈ tau^3 summing to ``iterations`` (Theorem 3)."""
    low, high = 0.0, float(iterations) ** (1 / 3) + 1
    for _ in range(100):
        tau = (low + high) / 2
        low, high = (tau, high) if m * tau**2 + tau**3 < iterations else (low, tau)
    first = min(max(1, round(m * low**2)), iterations - 1) if iterations > 1 else iterations
    return first, iterations - first


def _midtouch(problem, options, progress, deadline) -> Trajectory:
    strong = problem.objective.l2
    if strong <= 0:
        raise SpecError.at("solver.algorithm", "midtouch needs a strongly convex objective; "
                           "set objective.l2 > 0 or choose lighttouch")
    first, second = midtouch_phases(problem.m, options.iterations)
    arrays = problem_arrays(problem, problem.m)
    common = dict(gamma=_initial_gamma(options), eta_w=step_scale(options), eta_p=options.eta_p,
                  strong_convexity=strong, lazy=lazy_update(problem.m, options.p_update))
    cfg = run_config(arrays, mode=MODE_FULL, minibatch=(1, 1, 1), **common)
    state = new_state(arrays, _start_point(problem), options.seed)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    candidates = Candidates()
    share = max(2, round(options.candidates * first / options.iterations))
    cfg, finished = run_phase(driver, cfg, 0, first, share, candidates,
                              auto_gamma=options.gamma is None)
    if finished and second > 0:
        cfg = cfg._replace(mode=MODE_LIGHT)
        restart_average(state, driver.average())
        init_distribution(arrays, cfg, state, state.w, int(state.counters[ITERATION]))
        cfg, _ = run_phase(driver, cfg, first, options.iterations,
                           max(2, options.candidates - share), candidates)
    return _finish("midtouch", driver, candidates, cfg, phase_one_iterations=first)


def _projected_sgd(problem, options, progress, deadline) -> Trajectory:
    arrays = problem_arrays(problem, 0)
    cfg = run_config(arrays, mode=MODE_PLAIN, gamma=_initial_gamma(options),
                     eta_w=step_scale(options), eta_p=options.eta_p,
                     step_rule=_step_rule(problem, options),
                     strong_convexity=problem.objective.l2, minibatch=options.minibatch,
                     lazy=False)
    start = project(_start_point(problem), problem.constraints, problem.lower, problem.upper)
    state = new_state(arrays, start.solution, options.seed)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    projections = {"count": 1, "seconds": start.seconds}

    def project_iterate() -> None:
        result = project(driver.state.w, problem.constraints, problem.lower, problem.upper)
        projections["count"] += 1
        projections["seconds"] += result.seconds
        replace_iterate(driver.state, result.solution)

    candidates = Candidates()
    cfg, budget = _run(driver, cfg, options, candidates,
                       after_each=project_iterate if problem.m else None)
    return _finish("projected_sgd", driver, candidates, cfg, **budget,
                   projections=projections["count"], projection_s_total=projections["seconds"])
