"""The snapshots an algorithm leaves for the shrinking LP: :class:`Candidates`, taken by every
runner and read by the pipeline's polishing, warm start and summary."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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

    def _picked(self, keep: list[int]) -> Candidates:
        """A new set of the snapshots at positions ``keep`` (this one is left as it is)."""
        return Candidates(*([snapshots[k] for k in keep] for snapshots in (
            self.solutions, self.iterations, self.kinds, self.checks, self.seconds)))

    def finite(self) -> Candidates:
        """The snapshots whose coordinates are all finite numbers (not a diverged run's)."""
        return self._picked([k for k, solution in enumerate(self.solutions)
                             if np.isfinite(solution).all()])

    def last(self, count: int) -> Candidates:
        """The ``count`` most recent snapshots."""
        return self._picked(list(range(len(self.solutions)))[-count:])

    def joined(self, other: Candidates) -> Candidates:
        """A new set: these snapshots followed by ``other``'s."""
        return Candidates(self.solutions + other.solutions, self.iterations + other.iterations,
                          self.kinds + other.kinds, self.checks + other.checks,
                          self.seconds + other.seconds)
