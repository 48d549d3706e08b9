"""The runners of the algorithms of :data:`worker.catalogue.CATALOGUE`, and the ``auto`` rule.

``auto``: proxy_lagrangian when there are rate constraints (§6.2 of the games paper); else,
for a network, multiclass or robust problem, lagrangian (§6.1's robust problem; with no
constraint to play, both games are AdaGrad on the loss); else FullTouch when m <= 16
(checking everything is as cheap as sampling, paper §3.2's k > m case), LightTouch
(Algorithm 4) otherwise; but Epro-SGD instead of FullTouch when the
objective is strongly convex (l2 > 0) and m <= 16, and Epro-ORDA instead of Epro-SGD when
it also has an l1 term (l1 > 0). Epro checks all m constraints every
step, as FullTouch does, so it is only chosen where FullTouch would be; there its
ceil(log2(T/8 + 1)) projections are QPs with at most 16 rows (milliseconds each), far
cheaper than the epochs they end, and they buy the O(1/T) rate of Theorems 1 and 3.
With l1 > 0 the other algorithms step on the subgradient l1 sign(w), whose iterates
oscillate around zero; ORDA's proximal steps put coordinates at or next to zero
(docs/benchmarks.md, ``bench/epro_rate.py``'s ``l1`` curves).
``p_update: auto`` is lazy (one constraint per group) when m <= 1024 and dense with
``aggregate: auto`` = round(sqrt(m)) groups otherwise, balancing the O(G) p-update against
the m/G checks of a group. The lazy update costs O(#groups with mu > 0) per iteration;
on the paper's lattice (m = 24,576) thousands stay slightly violated, where aggregation
is faster (docs/benchmarks.md, ``bench/lattice_bench.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from worker.algorithms.loop import ProgressCallback
from worker.algorithms.options import SolverOptions, Trajectory
from worker.catalogue import AUTO, CATALOGUE, Algorithm
from worker.distributed.batch import PartitionedBatch
from worker.errors import SpecError
from worker.problem.compiled import CompiledProblem
from worker.problem.network import NetworkProblem

FULLTOUCH_MAX_M = 16

#: runner(problem, options, progress, deadline) -> Trajectory
Runner = Callable[[CompiledProblem, SolverOptions, ProgressCallback | None, float], Trajectory]


#: The algorithms by name (the catalogue's records).
ALGORITHMS: dict[str, Algorithm] = CATALOGUE


def choose_algorithm(problem: CompiledProblem | NetworkProblem, requested: str) -> str:
    """Resolve ``auto`` (see the module docstring) for a linear or a network problem."""
    if requested != AUTO:
        return requested
    if problem.rates is not None:
        return "proxy_lagrangian"
    if isinstance(problem, NetworkProblem):
        return "lagrangian"
    if problem.m <= FULLTOUCH_MAX_M:
        if problem.objective.l2 > 0:
            return "epro_orda" if problem.objective.l1 > 0 else "epro_sgd"
        return "fulltouch"
    return "lighttouch"


def run_algorithm(problem: CompiledProblem, options: SolverOptions,
                  progress: ProgressCallback | None = None,
                  source: PartitionedBatch | None = None) -> Trajectory:
    """Run the chosen algorithm; return candidates for the shrinking LP and the counters.
    ``source``: the examples' partitions, open, for an algorithm that reads them
    (:attr:`worker.catalogue.Algorithm.partitioned`)."""
    name = choose_algorithm(problem, options.algorithm)
    algorithm = ALGORITHMS[name]
    if problem.rates is not None and not algorithm.rates:
        raise SpecError.at("solver.algorithm", f"{name} cannot handle rate constraints (they "
                           "have no gradient); choose proxy_lagrangian, lagrangian or auto")
    started = time.perf_counter()
    run = algorithm.load()
    deadline = started + options.time_limit_s
    if source is not None:
        if not algorithm.partitioned:
            raise SpecError.at("solver.algorithm", f"{name} does not read partitioned data")
        trajectory = run(problem, options, progress, deadline, source=source)
    else:
        trajectory = run(problem, options, progress, deadline)
    trajectory.stats["solve_s"] = time.perf_counter() - started
    return trajectory
