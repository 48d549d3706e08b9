"""Runs the LightTouch-family loop on a :class:`~worker.algorithms.run.loop.ChunkedLoop`, and
keeps candidate snapshots for the shrinking LP (at fixed iterations, so chunking never
changes results)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import InitVar, dataclass, field

import numpy as np

from worker.algorithms.run.loop import ChunkedLoop, ProgressCallback
from worker.candidates.snapshots import Candidates
from worker.kernels.constraints import max_violation
from worker.kernels.iteration import restart_average, run_iterations, running_average
from worker.kernels.layout import (
    AVERAGE_START,
    CHECKS,
    GRADIENT_SAMPLES,
    ITERATION,
    KernelState,
    ProblemArrays,
)
from worker.kernels.objective import objective_value
from worker.problem.compiled import CompiledProblem
from worker.stats import Stats


@dataclass(frozen=True)
class Counters(Stats):
    """The counters every iterative algorithm reports (:mod:`worker.stats`): iterations,
    constraint checks and gradient samples."""

    iterations: int
    constraint_checks: int
    gradient_samples: int

    @classmethod
    def of(cls, iteration: int, counters: np.ndarray) -> Counters:
        """At ``iteration``, from the kernel state's ``counters``."""
        return cls(iteration, int(counters[CHECKS]), int(counters[GRADIENT_SAMPLES]))


def snapshot_iterations(start: int, stop: int, count: int) -> list[int]:
    """``count`` iterations evenly spaced in (start, stop], the last one being ``stop``."""
    count = max(1, min(count, stop - start))
    return sorted({start + round((stop - start) * (k + 1) / count) for k in range(count)})


@dataclass
class Driver:
    """Runs chunks of ``run_iterations`` for one state, with progress and a deadline."""

    arrays: ProblemArrays
    state: KernelState
    deadline: InitVar[float]
    progress: InitVar[ProgressCallback | None] = None
    total_iterations: InitVar[int] = 0
    problem: CompiledProblem | None = None
    gamma_history: list[tuple[int, float]] = field(default_factory=list)
    #: ``eta_w: "auto"``: the measured step scale and its measurements (``step_rule``).
    step_stats: dict[str, float] | None = None
    #: Seconds the fits of ``gamma: "auto"`` took, and the matrix entries their products
    #: touched (:func:`~worker.algorithms.run.phases.retune_gamma`).
    gamma_fit_s: float = 0.0
    gamma_fit_nonzeros: int = 0

    def __post_init__(self, deadline: float, progress: ProgressCallback | None,
                      total_iterations: int) -> None:
        self.loop = ChunkedLoop(deadline, total_iterations, self._describe, progress)

    @property
    def timed_out(self) -> bool:
        """Whether the deadline stopped the run."""
        return self.loop.timed_out

    @property
    def iteration(self) -> int:
        """The number of iterations done so far."""
        return int(self.state.counters[ITERATION]) - 1

    def average(self) -> np.ndarray:
        """The running average of the iterates, shape (d,)."""
        out = np.empty_like(self.state.w)
        running_average(self.state, out)
        return out

    def run(self, cfg, until: int, after_each: Callable[[], None] | None = None) -> bool:
        """Iterate until iteration ``until`` is done; False if the deadline stopped it first.

        ``after_each`` (if given) runs after every single iteration (projected SGD).
        """
        def advance(count: int) -> None:
            if after_each is None:
                run_iterations(self.arrays, cfg, self.state, count)
                return
            for _ in range(count):
                run_iterations(self.arrays, cfg, self.state, 1)
                after_each()

        self.loop.iteration = self.iteration
        return self.loop.run(advance, until)

    def snapshot(self, candidates: Candidates, with_iterate: bool) -> None:
        """Add the running average (and the current iterate) to ``candidates``."""
        checks = int(self.state.counters[CHECKS])
        seconds = self.loop.seconds
        candidates.add(self.average(), self.iteration, "average", checks, seconds)
        if with_iterate:
            candidates.add(self.state.w, self.iteration, "iterate", checks, seconds)

    def keep_average_recent(self) -> None:
        """Restart the running average once it spans more than the latest half of the run.

        Averages that forget the first half (suffix averaging) converge faster than the
        all-iterate average of Algorithms 1-4; the shrinking LP still sees both kinds.
        """
        start = int(self.state.counters[AVERAGE_START])
        if self.iteration + 1 >= 2 * start:
            restart_average(self.state, self.state.w)

    def _describe(self) -> tuple[float, float, int]:
        average = self.average()
        return (float(objective_value(self.arrays, average)),
                float(max_violation(self.arrays, average)), int(self.state.counters[CHECKS]))

    def counters(self) -> Counters:
        """The run's counters so far."""
        return Counters.of(self.iteration, self.state.counters)
