"""What the exact and quasi-Newton methods return: a :class:`Trajectory` with their one
answer as the only candidate (the shrinking LP then gives a one-member mixture), and its
certificate as ``stats``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from worker.algorithms.bounds.dual_bound import lagrangian_bound
from worker.algorithms.bounds.smooth_part import objective_value, regularizer
from worker.algorithms.run.arrays import ProblemArrays, problem_arrays
from worker.algorithms.run.loop import Progress, ProgressCallback
from worker.candidates.snapshots import Candidates
from worker.candidates.trajectory import Trajectory
from worker.errors import SpecError
from worker.problem.compiled import CompiledProblem
from worker.stats import Stats, Value


@dataclass(frozen=True)
class OneAnswerStats(Stats):
    """The record (:mod:`worker.stats`) of a method with one answer: no iterations or
    constraint checks of the LightTouch kind, whether the time limit stopped it, and the
    method's own figures with its certificate (:func:`certificate_stats`), and, for a
    method that read its examples in partitions, their passes' record (communication rounds,
    bytes moved: :class:`~worker.distributed.batch.BatchStats`)."""

    iterations: int
    constraint_checks: int
    stopped_by_time_limit: bool
    method: Mapping[str, Value]
    batch: Stats | None = None


def certificate_stats(problem: CompiledProblem, w: np.ndarray, multipliers: np.ndarray,
                      hinge_weights: np.ndarray | None = None,
                      tangent: tuple[float, np.ndarray] | None = None) -> dict[str, float | str]:
    """``stats`` of the answer w (d,): when the bound of
    :func:`~worker.algorithms.bounds.dual_bound.lagrangian_bound` is finite, ``lower_bound``,
    ``gap`` (f(w) - lower_bound), ``relative_gap`` (gap / |lower_bound|, when that is not 0) and
    ``certificate: "lagrangian_bound"`` (the keys of the hinge bound,
    :func:`~worker.candidates.lower_bound.lower_bound_stats`); otherwise
    ``certificate: "none"``. ``tangent``: L(w) and its gradient (d,), when the method has
    them."""
    bound = lagrangian_bound(problem, w, multipliers, hinge_weights, tangent)
    if not np.isfinite(bound):
        return gap_stats(np.inf, bound)
    value = objective_value(problem.objective, w) if tangent is None else \
        tangent[0] + regularizer(problem.objective, w)
    return gap_stats(value, bound)


def gap_stats(value: float, bound: float) -> dict[str, float | str]:
    """The certificate's ``stats`` of an answer of objective ``value`` and a lower ``bound``
    on the optimum (:func:`certificate_stats`)."""
    if not np.isfinite(bound):
        return {"certificate": "none"}
    stats = {"lower_bound": bound, "gap": value - bound, "certificate": "lagrangian_bound"}
    if bound != 0:
        stats["relative_gap"] = stats["gap"] / abs(bound)
    return stats


def one_answer(name: str, problem: CompiledProblem, w: np.ndarray, stats: dict,
               began: float, progress: ProgressCallback | None) -> Trajectory:
    """The trajectory of one answer w (d,), clipped to the box, found in the seconds since
    ``began`` (a ``time.perf_counter()`` value); ``progress`` hears of it once."""
    w = np.clip(np.asarray(w, dtype=np.float64), problem.lower, problem.upper)
    return answer_trajectory(name, w, lambda: (
        objective_value(problem.objective, w),
        float(problem.constraints.values(w).max(initial=0.0))), stats, began, progress,
        problem_arrays(problem, 1))


def answer_trajectory(name: str, w: np.ndarray, describe: Callable[[], tuple[float, float]],
                      stats: dict, began: float, progress: ProgressCallback | None,
                      arrays: ProblemArrays | None = None,
                      batch: Stats | None = None) -> Trajectory:
    """The trajectory of one answer w (P,) of a linear or network problem.

    Parameters
    ----------
    name : str
        The method.
    w : ndarray, shape (P,)
        The answer, in the box.
    describe : callable
        () -> (objective, largest constraint violation) at w, for ``progress``.
    stats : dict
        The method's figures (:class:`OneAnswerStats`'s ``method``).
    began : float
        A ``time.perf_counter()`` value: when the method started.
    progress : callable or None
        Hears of the answer once.
    arrays : ProblemArrays or None
        The linear problem's kernel arrays.
    batch : Stats or None
        The record of the passes over partitions, when the method read its examples there.
    """
    seconds = time.perf_counter() - began
    candidates = Candidates()
    candidates.add(w, 1, "exact", 0, seconds)
    if progress is not None:
        objective, violation = describe()
        progress(Progress(iteration=1, iterations=1, objective=objective,
                          max_violation=violation, constraint_checks=0, elapsed_s=seconds))
    return Trajectory(name, candidates, arrays,
                      OneAnswerStats(0, 0, stats.get("stopped_by") == "time_limit", stats,
                                     batch))


def refuse(name: str, why: str) -> SpecError:
    """The error for a problem the method ``name`` cannot solve, at ``solver.algorithm``."""
    return SpecError.at("solver.algorithm", f"{name} {why}; leave solver.algorithm \"auto\" "
                        "to choose a method that can")
