"""The runners of the algorithms of :data:`worker.catalogue.CATALOGUE`, and the ``auto`` rule.

``auto``: proxy_lagrangian when there are rate constraints (§6.2 of the games paper); else,
for a network, multiclass or robust problem, lagrangian (§6.1's robust problem; with no
constraint to play, both games are AdaGrad on the loss), except a small robust linear problem
(:func:`~worker.algorithms.method_choice.choose_robust`) and a small network whose only
constraint is the box (:func:`~worker.algorithms.method_choice.choose_network`); else, for a
linear model,
:func:`~worker.algorithms.method_choice.choose_method`: the fastest method for the problem's
kind and size (L-BFGS-B, an exact interior point, or the LightTouch family), and why
(``stats.method``, ``stats.method_reason``; docs/method-choice.md).
``p_update: auto`` is lazy (one constraint per group) when m <= 1024 and dense with
``aggregate: auto`` = round(sqrt(m)) groups otherwise, balancing the O(G) p-update against
the m/G checks of a group. The lazy update costs O(#groups with mu > 0) per iteration;
on the paper's lattice (m = 24,576) thousands stay slightly violated, where aggregation
is faster (docs/benchmarks.md, ``bench/lattice_bench.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from worker.algorithms.method_choice import Choice, choose_method, choose_network, choose_robust
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.options import SolverOptions
from worker.candidates.trajectory import RunStats, Trajectory
from worker.catalogue import AUTO, CATALOGUE, Algorithm
from worker.distributed.batch import PartitionedBatch
from worker.errors import SpecError
from worker.problem.compiled import CompiledProblem
from worker.problem.network import NetworkProblem

#: runner(problem, options, progress, deadline) -> Trajectory
Runner = Callable[[CompiledProblem, SolverOptions, ProgressCallback | None, float], Trajectory]


#: The algorithms by name (the catalogue's records).
ALGORITHMS: dict[str, Algorithm] = CATALOGUE


def chosen(problem: CompiledProblem | NetworkProblem, requested: str) -> Choice:
    """The algorithm to run and why (see the module docstring)."""
    if requested != AUTO:
        return Choice(requested, "solver.algorithm")
    if isinstance(problem, NetworkProblem):
        if (exact := choose_robust(problem)) is not None:
            return exact
        if (quasi := choose_network(problem)) is not None:
            return quasi
        name = "lagrangian" if problem.rates is None else "proxy_lagrangian"
        return Choice(name, "network, multiclass or robust objective: the games")
    return choose_method(problem)


def choose_algorithm(problem: CompiledProblem | NetworkProblem, requested: str) -> str:
    """Resolve ``auto`` (see the module docstring) for a linear or a network problem."""
    return chosen(problem, requested).name


def run_algorithm(problem: CompiledProblem, options: SolverOptions,
                  progress: ProgressCallback | None = None,
                  source: PartitionedBatch | None = None) -> Trajectory:
    """Run the chosen algorithm; return candidates for the shrinking LP and the counters.
    ``source``: the examples' partitions, open, for an algorithm that reads them
    (:attr:`worker.catalogue.Algorithm.partitioned`)."""
    choice = chosen(problem, options.algorithm)
    name, algorithm = choice.name, ALGORITHMS[choice.name]
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
    return replace(trajectory, run=RunStats(trajectory.stats, time.perf_counter() - started,
                                            name, choice.reason))
