"""Runs the compiled loop in chunks: progress, deadline, and candidate snapshots in Python.

Chunk lengths adapt to wall time (about a quarter second each) but never change results:
every iteration is the same whatever the chunking, and snapshots fall on fixed iterations.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

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
from worker.problem import CompiledProblem

_TARGET_CHUNK_S = 0.25


@dataclass(frozen=True)
class Progress:
    """One progress report: the running average's objective and violation so far."""

    iteration: int
    iterations: int
    objective: float
    max_violation: float
    constraint_checks: int
    elapsed_s: float


ProgressCallback = Callable[[Progress], None]


@dataclass
class Candidates:
    """Snapshots for the shrinking LP: solutions (C, d), their iteration, kind, the constraint
    checks and seconds spent when they were taken."""

    solutions: list[np.ndarray] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    checks: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, solution: np.ndarray, iteration: int, kind: str, checks: int,
            seconds: float) -> None:
        """Keep a copy of ``solution`` (shape (d,)) with when it was taken."""
        self.solutions.append(np.array(solution, dtype=np.float64))
        self.iterations.append(int(iteration))
        self.kinds.append(kind)
        self.checks.append(int(checks))
        self.seconds.append(float(seconds))


def snapshot_iterations(start: int, stop: int, count: int) -> list[int]:
    """``count`` iterations evenly spaced in (start, stop], the last one being ``stop``."""
    count = max(1, min(count, stop - start))
    return sorted({start + round((stop - start) * (k + 1) / count) for k in range(count)})


@dataclass
class Driver:
    """Runs chunks of ``run_iterations`` for one state, with progress and a deadline."""

    arrays: ProblemArrays
    state: KernelState
    deadline: float
    progress: ProgressCallback | None = None
    total_iterations: int = 0
    problem: CompiledProblem | None = None
    gamma_history: list[tuple[int, float]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    timed_out: bool = False
    _chunk: int = 64
    _last_report: float = 0.0

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
        while self.iteration < until:
            if time.perf_counter() >= self.deadline:
                self.timed_out = True
                return False
            count = 1 if after_each else min(self._chunk, until - self.iteration)
            began = time.perf_counter()
            run_iterations(self.arrays, cfg, self.state, count)
            if after_each:
                after_each()
            spent = time.perf_counter() - began
            if not after_each:
                scale = _TARGET_CHUNK_S / max(spent, 1e-6)
                self._chunk = int(min(max(count * min(scale, 4.0), 16), 10_000_000))
            self._report()
        self._report(force=True)
        return True

    def snapshot(self, candidates: Candidates, with_iterate: bool) -> None:
        """Add the running average (and the current iterate) to ``candidates``."""
        checks = int(self.state.counters[CHECKS])
        seconds = time.perf_counter() - self.started
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

    def _report(self, force: bool = False) -> None:
        now = time.perf_counter()
        if self.progress is None or (not force and now - self._last_report < _TARGET_CHUNK_S):
            return
        self._last_report = now
        average = self.average()
        self.progress(Progress(
            iteration=self.iteration, iterations=self.total_iterations,
            objective=float(objective_value(self.arrays, average)),
            max_violation=float(max_violation(self.arrays, average)),
            constraint_checks=int(self.state.counters[CHECKS]), elapsed_s=now - self.started))

    def stats(self) -> dict[str, int]:
        """Counters for the Result's ``stats``."""
        return {"iterations": self.iteration,
                "constraint_checks": int(self.state.counters[CHECKS]),
                "gradient_samples": int(self.state.counters[GRADIENT_SAMPLES])}
