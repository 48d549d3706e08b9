"""Chunked running of a compiled step function: progress, deadline, adaptive chunk lengths.

:class:`~worker.algorithms.run.driver.Driver` runs the LightTouch kernel state on it; any
``advance(count)`` callable works, so every algorithm gets the same progress reports,
deadline and wall-time-adaptive chunks. Chunking never changes
results: the compiled step does the same iterations whatever the chunk lengths.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

_TARGET_CHUNK_S = 0.25
#: Reports take at most this share of the run: describing the point evaluates the objective
#: on every example, and a report after every snapshot once took most of a run at the
#: LightTouch paper's lattice size (measured: docs/algorithms.md, "Fast iterations").
REPORT_SHARE = 0.05


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

#: (objective, max violation, constraint checks) of the point to report now.
Describe = Callable[[], tuple[float, float, int]]


@dataclass
class ChunkedLoop:
    """Runs ``advance(count)`` in chunks until an iteration target, honouring a deadline."""

    deadline: float
    total_iterations: int
    describe: Describe
    progress: ProgressCallback | None = None
    iteration: int = 0
    timed_out: bool = False
    started: float = field(default_factory=time.perf_counter)
    _chunk: int = 64
    _last_report: float = 0.0
    _describe_s: float = 0.0

    def run(self, advance: Callable[[int], None], until: int) -> bool:
        """Advance to iteration ``until``; False if the deadline stopped it first."""
        while self.iteration < until:
            if time.perf_counter() >= self.deadline:
                self.timed_out = True
                return False
            count = min(self._chunk, until - self.iteration)
            began = time.perf_counter()
            advance(count)
            self.iteration += count
            scale = _TARGET_CHUNK_S / max(time.perf_counter() - began, 1e-6)
            self._chunk = int(min(max(count * min(scale, 4.0), 16), 10_000_000))
            self.report()
        return True

    def report(self, force: bool = False) -> None:
        """Call the progress callback, unless forced at most every quarter second and so
        that describing the point takes at most :data:`REPORT_SHARE` of the time."""
        now = time.perf_counter()
        interval = max(_TARGET_CHUNK_S, self._describe_s / REPORT_SHARE)
        if self.progress is None or (not force and now - self._last_report < interval):
            return
        objective, violation, checks = self.describe()
        self._last_report = time.perf_counter()
        self._describe_s = self._last_report - now
        self.progress(Progress(iteration=self.iteration, iterations=self.total_iterations,
                               objective=objective, max_violation=violation,
                               constraint_checks=checks, elapsed_s=now - self.started))

    @property
    def seconds(self) -> float:
        """Wall time since the loop was created."""
        return time.perf_counter() - self.started
