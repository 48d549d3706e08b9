"""The algorithms by name: one :class:`Algorithm` record each, and the ``auto`` rule.

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

import time
from collections.abc import Callable
from dataclasses import dataclass

from worker.algorithms import epro, epro_orda, games, svrg_ol, touch
from worker.algorithms.loop import ProgressCallback
from worker.algorithms.options import SolverOptions, Trajectory
from worker.errors import SpecError
from worker.problem.compiled import CompiledProblem

FULLTOUCH_MAX_M = 16

#: runner(problem, options, progress, deadline) -> Trajectory
Runner = Callable[[CompiledProblem, SolverOptions, ProgressCallback | None, float], Trajectory]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: how to run it and what it takes.

    Attributes
    ----------
    runner : Runner
    options : str or None
        The ``solver`` sub-block it reads besides the common settings (``"svrg"``,
        ``"game"``) or None.
    rates : bool
        Whether it handles rate constraints.
    """

    runner: Runner
    options: str | None = None
    rates: bool = False


ALGORITHMS: dict[str, Algorithm] = {
    "fulltouch": Algorithm(touch.run_fulltouch),
    "lighttouch": Algorithm(touch.run_lighttouch),
    "midtouch": Algorithm(touch.run_midtouch),
    "projected_sgd": Algorithm(touch.run_projected_sgd),
    "epro_sgd": Algorithm(epro.run_epro_sgd),
    "epro_orda": Algorithm(epro_orda.run_epro_orda),
    "svrg_ol": Algorithm(svrg_ol.run_svrg_ol, options="svrg"),
    "lagrangian": Algorithm(games.run_lagrangian, options="game", rates=True),
    "proxy_lagrangian": Algorithm(games.run_proxy_lagrangian, options="game", rates=True),
}


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


def run_algorithm(problem: CompiledProblem, options: SolverOptions,
                  progress: ProgressCallback | None = None) -> Trajectory:
    """Run the chosen algorithm; return candidates for the shrinking LP and the counters."""
    name = choose_algorithm(problem, options.algorithm)
    algorithm = ALGORITHMS[name]
    if problem.rates is not None and not algorithm.rates:
        raise SpecError.at("solver.algorithm", f"{name} cannot handle rate constraints (they "
                           "have no gradient); choose proxy_lagrangian, lagrangian or auto")
    started = time.perf_counter()
    trajectory = algorithm.runner(problem, options, progress, started + options.time_limit_s)
    trajectory.stats["solve_s"] = time.perf_counter() - started
    return trajectory
