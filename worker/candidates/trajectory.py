"""What a run leaves: :class:`Trajectory` (candidates, counters, the arrays they ran on) and
its timed record :class:`RunStats`, made by every runner and read by the pipeline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from worker.candidates.snapshots import Candidates
from worker.kernels.layout import ProblemArrays
from worker.stats import Stats, Value


@dataclass(frozen=True)
class RunStats(Stats):
    """The run stage's record (:mod:`worker.stats`): the algorithm's own counters, then the
    seconds it ran, and which method ran and why (``auto``'s choice)."""

    algorithm: Stats
    solve_s: float
    method: str
    method_reason: str


@dataclass(frozen=True)
class GameEnd:
    """Where a linear game (Cotter, Jiang, Sridharan 2019, Algorithms 1-2) ended, for a warm
    start to resume it: its ``regret`` ("swap", "external"; None for the Lagrangian), the
    lambda-player's state (lambda (m+1,), log M (m+1, m+1) for swap
    regret, log lambda (m+1,) for external regret) and the theta-player's step state (its
    AdaGrad diameter, None on a fixed schedule, and the sum of squared step norms)."""

    regret: str | None
    lam: np.ndarray
    log_m: np.ndarray
    log_lam: np.ndarray
    theta_diameter: float | None
    gradient_sum: float


@dataclass
class Trajectory:
    """What an algorithm leaves for shrinking: candidates, its own counters (``stats``), the
    kernel arrays it ran on (reused to score the candidates; None for the network games,
    whose problem scores itself) and, once the runner has timed it, the run's record."""

    algorithm: str
    candidates: Candidates
    arrays: ProblemArrays | None
    #: the algorithm's own record (:mod:`worker.stats`)
    stats: Stats
    #: weights (C,) of the algorithm's own mixture of its candidates (the games' theta-bar,
    #: Theorems 2-3), reported next to the shrunk mixture; None for the other algorithms.
    baseline: np.ndarray | None = None
    #: set by :func:`worker.algorithms.registry.run_algorithm` (or the network pipeline)
    run: RunStats | None = None
    #: a linear game's end state (None for every other algorithm), kept in the Result's
    #: ``resume`` for a warm start
    game_end: GameEnd | None = None

    def as_stats(self) -> dict[str, Value]:
        """The run's stats: the record's entries, or the algorithm's own before it is timed."""
        if self.run is not None:
            return self.run.as_stats()
        return self.stats.as_stats()
