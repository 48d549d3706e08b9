"""FullTouch, LightTouch, MidTouch and projected SGD: Python drivers of the one compiled
loop (:mod:`worker.kernels.iteration`; LightTouch paper, Algorithms 1-4). FullTouch and
LightTouch also run on examples left in partitions (``source``: rounds of sampled rows,
:mod:`worker.algorithms.run.rounds`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from worker.algorithms.run.arrays import new_state, problem_arrays, run_config
from worker.algorithms.run.driver import Counters, Driver
from worker.algorithms.run.groups import group_count, lazy_update
from worker.algorithms.run.options import SolverOptions, start_point, step_scale
from worker.algorithms.run.phases import run_phase, run_to_tolerance
from worker.algorithms.run.rounds import ROUND_ROWS, RoundDriver, rounds_to_tolerance
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import Trajectory
from worker.distributed.batch import PartitionedBatch, with_rows
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
)
from worker.problem.compiled import CompiledProblem
from worker.projection import project
from worker.stats import Stats, Value


@dataclass(frozen=True)
class TouchStats(Stats):
    """The record (:mod:`worker.stats`) of FullTouch, LightTouch, MidTouch and projected
    SGD: the counters, how the run ended (``stopped_by`` and the stopping rule's figures)
    and what the algorithm adds, then whether the time limit stopped it, the final penalty
    and step, the step rule's warm-up and the seconds of ``gamma: "auto"``'s fits."""

    counters: Counters
    budget: Mapping[str, Value]
    extra: Mapping[str, Value]
    stopped_by_time_limit: bool
    gamma: float
    eta_w: float
    steps: Mapping[str, Value]
    gamma_fit_s: float


def _finish(name: str, driver: Driver, candidates: Candidates, cfg,
            budget: Mapping[str, Value], **extra: Value) -> Trajectory:
    driver.loop.report(force=True)                     # progress at the last iteration
    stats = TouchStats(driver.counters(), budget, extra, driver.timed_out, float(cfg.gamma),
                       float(cfg.eta_w), driver.step_stats or {}, driver.gamma_fit_s)
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


def _step_rule(problem: CompiledProblem, options: SolverOptions) -> int:
    """STEP_DOG marks ``eta_w: "auto"`` on a non-strongly-convex objective: the phase starts
    with the warm-ups of :mod:`worker.algorithms.run.step_rule`."""
    return STEP_DOG if options.eta_w is None and problem.objective.l2 == 0 else STEP_SCHEDULE


def _config(problem: CompiledProblem, arrays, options: SolverOptions, mode: int, *,
            lazy: bool):
    """The run configuration of a one-phase algorithm from the options."""
    return run_config(arrays, mode=mode, gamma=_initial_gamma(options),
                      eta_w=step_scale(options), eta_p=options.eta_p,
                      step_rule=_step_rule(problem, options),
                      strong_convexity=problem.objective.l2, minibatch=options.minibatch,
                      lazy=lazy)


def _initial_gamma(options: SolverOptions) -> float:
    """gamma as given; automatic: a warm start's earlier gamma, else 1 (then raised at the
    checkpoints of :mod:`worker.algorithms.run.penalty`)."""
    if options.gamma is not None:
        return options.gamma
    return 1.0 if options.start_gamma is None else options.start_gamma


def run_fulltouch(problem, options, progress, deadline, source=None) -> Trajectory:
    if source is not None:
        return run_on_rounds("fulltouch", problem, options, progress, deadline, source)
    arrays = problem_arrays(problem, problem.m)
    cfg = _config(problem, arrays, options, MODE_FULL, lazy=False)
    state = new_state(arrays, start_point(problem, options), options.seed)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    candidates = Candidates()
    cfg, budget = _run(driver, cfg, options, candidates, auto_gamma=options.gamma is None)
    return _finish("fulltouch", driver, candidates, cfg, budget)


def run_lighttouch(problem, options, progress, deadline, source=None) -> Trajectory:
    if source is not None:
        return run_on_rounds("lighttouch", problem, options, progress, deadline, source)
    lazy = lazy_update(problem.m, options.p_update)
    groups = group_count(problem.m, options.aggregate, lazy)
    arrays = problem_arrays(problem, groups)
    cfg = _config(problem, arrays, options, MODE_LIGHT, lazy=lazy)
    state = new_state(arrays, start_point(problem, options), options.seed)
    init_distribution(arrays, cfg, state, state.w, 1)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    candidates = Candidates()
    cfg, budget = _run(driver, cfg, options, candidates, auto_gamma=options.gamma is None)
    return _finish("lighttouch", driver, candidates, cfg, budget, groups=groups,
                   p_update="lazy" if lazy else "dense",
                   **_light_stats(driver, driver.iteration))


def run_on_rounds(name: str, problem: CompiledProblem, options: SolverOptions, progress,
                  deadline: float, source: PartitionedBatch) -> Trajectory:
    """FullTouch or LightTouch (``name``) on examples left in ``source``'s partitions, in
    rounds of sampled rows (:mod:`worker.algorithms.run.rounds`)."""
    full = name == "fulltouch"
    lazy = not full and lazy_update(problem.m, options.p_update)
    groups = problem.m if full else group_count(problem.m, options.aggregate, lazy)
    arrays = with_rows(problem_arrays(problem, groups), source.round_sample(0, ROUND_ROWS))
    cfg = _config(problem, arrays, options, MODE_FULL if full else MODE_LIGHT, lazy=lazy)
    state = new_state(arrays, start_point(problem, options), options.seed)
    if not full:
        init_distribution(arrays, cfg, state, state.w, 1)
    driver = RoundDriver(arrays, state, deadline, progress, options.iterations,
                         problem=problem, batch=source, loaded=0)
    candidates, auto_gamma = Candidates(), options.gamma is None
    if options.until_converged:
        cfg, budget = rounds_to_tolerance(driver, cfg, options.candidates, candidates,
                                          tolerance=options.tolerance, auto_gamma=auto_gamma)
    else:
        cfg, finished = run_phase(driver, cfg, 0, options.iterations, options.candidates,
                                  candidates, auto_gamma=auto_gamma)
        budget = {"stopped_by": "iterations" if finished else "time_limit"}
    extra = {} if full else {"groups": groups, "p_update": "lazy" if lazy else "dense",
                             **_light_stats(driver, driver.iteration)}
    return _finish(name, driver, candidates, cfg, budget, **extra, **driver.rounds())


def midtouch_phases(m: int, iterations: int) -> tuple[int, int]:
    """(T1, T2) with T1 ≈ m tau^2 and T2 ≈ tau^3 summing to ``iterations`` (Theorem 3)."""
    low, high = 0.0, float(iterations) ** (1 / 3) + 1
    for _ in range(100):
        tau = (low + high) / 2
        low, high = (tau, high) if m * tau**2 + tau**3 < iterations else (low, tau)
    first = min(max(1, round(m * low**2)), iterations - 1) if iterations > 1 else iterations
    return first, iterations - first


def run_midtouch(problem, options, progress, deadline) -> Trajectory:
    strong = problem.objective.l2
    if strong <= 0:
        raise SpecError.at("solver.algorithm", "midtouch needs a strongly convex objective; "
                           "set objective.l2 > 0 or choose lighttouch")
    first, second = midtouch_phases(problem.m, options.iterations)
    arrays = problem_arrays(problem, problem.m)
    common = dict(gamma=_initial_gamma(options), eta_w=step_scale(options), eta_p=options.eta_p,
                  strong_convexity=strong, lazy=lazy_update(problem.m, options.p_update))
    cfg = run_config(arrays, mode=MODE_FULL, minibatch=(1, 1, 1), **common)
    state = new_state(arrays, start_point(problem, options), options.seed)
    driver = _driver(problem, arrays, state, options, progress, deadline)
    candidates = Candidates()
    share = max(2, round(options.candidates * first / options.iterations))
    cfg, finished = run_phase(driver, cfg, 0, first, share, candidates,
                              auto_gamma=options.gamma is None)
    budget = {"stopped_by": "iterations" if finished else "time_limit"}
    if finished and second > 0:
        cfg = cfg._replace(mode=MODE_LIGHT)
        restart_average(state, driver.average())
        init_distribution(arrays, cfg, state, state.w, int(state.counters[ITERATION]))
        if options.until_converged:            # phase two runs until the stopping rule
            cfg, budget = run_to_tolerance(driver, cfg, options.candidates, candidates,
                                           tolerance=options.tolerance)
        else:
            cfg, finished = run_phase(driver, cfg, first, options.iterations,
                                      max(2, options.candidates - share), candidates)
            budget["stopped_by"] = "iterations" if finished else "time_limit"
    return _finish("midtouch", driver, candidates, cfg, budget, phase_one_iterations=first)


def run_projected_sgd(problem, options, progress, deadline) -> Trajectory:
    arrays = problem_arrays(problem, 0)
    cfg = _config(problem, arrays, options, MODE_PLAIN, lazy=False)
    start = project(start_point(problem, options), problem.constraints, problem.lower,
                    problem.upper)
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
    return _finish("projected_sgd", driver, candidates, cfg, budget,
                   projections=projections["count"], projection_s_total=projections["seconds"])
