"""The one dispatcher of the algorithms of :data:`worker.catalogue.CATALOGUE`, for linear and
network problems, and the ``auto`` rule: :func:`chosen` resolves ``solver.algorithm`` once per
job to a :class:`~worker.algorithms.method_choice.Choice`, :func:`run_choice` runs it.

``auto``: proxy_lagrangian when there are rate constraints (§6.2 of the games paper); else,
for a network, multiclass or robust problem or group-loss constraints, lagrangian (§6.1's
robust problem; with no constraint to play, both games are AdaGrad on the loss), except a
small robust or group-loss-constrained linear problem
(:func:`~worker.algorithms.method_choice.choose_robust`) and a small network whose only
constraint is the box (:func:`~worker.algorithms.method_choice.choose_network`); else, for a
linear model,
:func:`~worker.algorithms.method_choice.choose_method`: the fastest method for the problem's
kind and size (L-BFGS-B, an exact interior point, or the LightTouch family), and why
(``stats.method``, ``stats.method_reason``; docs/method-choice.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from worker.algorithms.exact.exact_robust import run_exact_robust
from worker.algorithms.method_choice import (
    Choice,
    choose_method,
    choose_network,
    choose_robust,
    games_reason,
    refuse_rate_objective,
)
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.options import SolverOptions
from worker.algorithms.runners.network_games import run_network_game
from worker.candidates.trajectory import RunStats, Trajectory
from worker.catalogue import AUTO, CATALOGUE, Algorithm
from worker.distributed.batch import PartitionedBatch
from worker.errors import LossRefused, SpecError
from worker.losses import loss_of
from worker.problem.compiled import CompiledProblem
from worker.problem.network import NetworkProblem

#: runner(problem, options, progress, deadline) -> Trajectory
Runner = Callable[[CompiledProblem, SolverOptions, ProgressCallback | None, float], Trajectory]


#: The algorithms by name (the catalogue's records).
ALGORITHMS: dict[str, Algorithm] = CATALOGUE

#: Why a method refuses a loss, by the :attr:`~worker.catalogue.Algorithm.loss_needs` it lacks.
LOSS_NEEDS = {"smooth": "it is not smooth", "has_conic_form": "it has no conic form",
              "has_qp_form": "it has no LP or QP form"}


def chosen(problem: CompiledProblem | NetworkProblem, requested: str) -> Choice:
    """The algorithm to run and why (see the module docstring); a method that cannot take
    the objective's loss raises :class:`~worker.errors.LossRefused`."""
    if requested != AUTO:
        refuse_rate_objective(problem, requested)
        _refuse_losses(problem, requested)
        return Choice(requested, "solver.algorithm")
    if isinstance(problem, NetworkProblem):
        if (exact := choose_robust(problem)) is not None:
            return exact
        if (quasi := choose_network(problem)) is not None:
            return quasi
        name = "lagrangian" if problem.rates is None else "proxy_lagrangian"
        return Choice(name, games_reason(problem))
    return choose_method(problem)


def _refuse_losses(problem: CompiledProblem | NetworkProblem, name: str) -> None:
    """Raise :class:`~worker.errors.LossRefused` for the first loss ``name`` cannot take."""
    codes = [term.code for term in problem.terms] if isinstance(problem, NetworkProblem) \
        else [problem.objective.kind]
    algorithm = ALGORITHMS[name]
    for loss in filter(None, map(loss_of, codes)):
        if not algorithm.takes(loss):
            lacking = next(need for need in algorithm.loss_needs if not getattr(loss, need))
            takers = [other for other, record in ALGORITHMS.items() if record.takes(loss)]
            raise LossRefused(loss.name, name, LOSS_NEEDS[lacking], takers)


def run_algorithm(problem: CompiledProblem | NetworkProblem, options: SolverOptions,
                  progress: ProgressCallback | None = None,
                  source: PartitionedBatch | None = None) -> Trajectory:
    """:func:`run_choice` of ``options.algorithm`` resolved (:func:`chosen`): for callers
    that hold no choice yet (the library's tests and benchmarks)."""
    return run_choice(chosen(problem, options.algorithm), problem, options, progress, source)


def run_choice(choice: Choice, problem: CompiledProblem | NetworkProblem,
               options: SolverOptions, progress: ProgressCallback | None = None,
               source: PartitionedBatch | None = None) -> Trajectory:
    """Run the chosen algorithm on a linear or a network problem; return its candidates with
    the run's record (its counters, seconds, the method and why). ``source``: the examples'
    partitions, open, for an algorithm that reads them
    (:attr:`worker.catalogue.Algorithm.partitioned`)."""
    name, algorithm = choice.name, choice.record
    refuse_rate_objective(problem, name)
    if problem.rates is not None and not algorithm.rates:
        raise SpecError.at("solver.algorithm", f"{name} cannot handle rate constraints (they "
                           "have no gradient); choose proxy_lagrangian, lagrangian or auto")
    started = time.perf_counter()
    deadline = started + options.time_limit_s
    if isinstance(problem, NetworkProblem):
        trajectory = _run_network(choice, problem, options, progress, deadline)
    elif source is not None:
        if not (algorithm.partitioned or algorithm.pairs):
            raise SpecError.at("solver.algorithm", f"{name} does not read partitioned data")
        trajectory = algorithm.load()(problem, options, progress, deadline, source=source)
    else:
        trajectory = algorithm.load()(problem, options, progress, deadline)
    return replace(trajectory, run=RunStats(trajectory.stats, time.perf_counter() - started,
                                            name, choice.reason))


def _run_network(choice: Choice, problem: NetworkProblem, options: SolverOptions,
                 progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """A method of its own on networks, the exact epigraph program of a small robust linear
    problem, or the network game played under the method's name."""
    record = choice.record
    if record.network_runner is not None:
        return record.load(network=True)(problem, options, progress, deadline)
    if record.certified:
        return run_exact_robust(choice.name, problem, progress, deadline)
    return run_network_game(problem, options, choice.name, progress, deadline)
