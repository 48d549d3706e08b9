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
exact_qp          one LP (hinge, HiGHS) or QP (Clarabel) solved to the solvers' tolerance
                  (:mod:`.exact`)
exact_conic       the same, and logistic loss through exponential cones (:mod:`.exact`)
lbfgsb            L-BFGS-B on smooth objectives whose only constraint is the box
                  (:mod:`.lbfgsb`)
================  ==========================================================================

``auto``: :mod:`.method_choice` (the fastest method for the problem's kind and size, and
why: ``stats.method_reason``).
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

from worker.algorithms import epro, epro_orda, exact, games, lbfgsb, svrg_ol, touch
from worker.algorithms.loop import ProgressCallback
from worker.algorithms.method_choice import Choice, choose_method
from worker.algorithms.options import SolverOptions, Trajectory
from worker.errors import SpecError
from worker.problem.compiled import CompiledProblem

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
    certified : bool
        Whether it returns one answer with its own certificate (the exact and quasi-Newton
        methods): the pipeline then neither polishes it nor bounds it again.
    """

    runner: Runner
    options: str | None = None
    rates: bool = False
    certified: bool = False


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
    "exact_qp": Algorithm(exact.run_exact_qp, certified=True),
    "exact_conic": Algorithm(exact.run_exact_conic, certified=True),
    "lbfgsb": Algorithm(lbfgsb.run_lbfgsb, certified=True),
}


def choose_algorithm(problem: CompiledProblem, requested: str) -> str:
    """Resolve ``auto`` (:func:`~worker.algorithms.method_choice.choose_method`)."""
    return choose_method(problem).name if requested == "auto" else requested


def run_algorithm(problem: CompiledProblem, options: SolverOptions,
                  progress: ProgressCallback | None = None) -> Trajectory:
    """Run the chosen algorithm; return candidates for the shrinking LP and the counters."""
    choice = choose_method(problem) if options.algorithm == "auto" else \
        Choice(options.algorithm, "solver.algorithm")
    name, algorithm = choice.name, ALGORITHMS[choice.name]
    if problem.rates is not None and not algorithm.rates:
        raise SpecError.at("solver.algorithm", f"{name} cannot handle rate constraints (they "
                           "have no gradient); choose proxy_lagrangian, lagrangian or auto")
    started = time.perf_counter()
    trajectory = algorithm.runner(problem, options, progress, started + options.time_limit_s)
    trajectory.stats.update(solve_s=time.perf_counter() - started, method=name,
                            method_reason=choice.reason)
    return trajectory
