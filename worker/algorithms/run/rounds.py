"""The LightTouch family's loop on examples left in partitions: rounds of sampled rows.

Round r covers iterations [r R, (r + 1) R), R = :data:`ROUND_ITERATIONS`. Before its first
iteration the driver gathers about :data:`ROUND_ROWS` rows, selected in every partition by a
hash of (seed, r, global row) (:meth:`worker.distributed.batch.PartitionedBatch.round_sample`),
and the compiled loop (LightTouch paper, Algorithms 1-4) draws its examples from them, so the
driver holds the constraints and one round's rows, never a row per example. Which rows a
round holds depends only on the seed, the round and the partitions (cut by rows, not by
workers), and the loop's chunks never cross a round's edge, so a fixed iteration count gives
the same bits in this process, on one worker and on many.

``iterations: "auto"`` runs doubling stages (:mod:`worker.algorithms.run.phases`) and stops
when the estimate of :func:`~worker.algorithms.run.stopping.estimated_gap`, from the
objective over every partition of each stage's projected average (one map-reduce per
stage), is within the tolerance, or at the time limit. The certificate of the in-memory
rule needs every row on the driver, and is not tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from worker.algorithms.run.driver import Driver
from worker.algorithms.run.phases import (
    AUTO_WARMUP_MIN,
    AUTO_WARMUP_PER_ROW,
    GAMMA_STAGES,
    run_phase,
)
from worker.algorithms.run.step_rule import warm_up
from worker.algorithms.run.stopping import estimated_gap
from worker.candidates.snapshots import Candidates
from worker.distributed.batch import PartitionedBatch, with_rows
from worker.kernels.iteration import run_iterations
from worker.kernels.layout import STEP_SCHEDULE
from worker.projection import project

#: Iterations of one round.
ROUND_ITERATIONS = 2**14
#: Rows a round samples (about two per iteration: the automatic minibatch's k_f).
ROUND_ROWS = 2**15


@dataclass
class RoundDriver(Driver):
    """A :class:`~worker.algorithms.run.driver.Driver` whose examples are the current
    round's rows of ``batch`` (module docstring); ``loaded`` is the round they are."""

    batch: PartitionedBatch | None = None
    loaded: int = -1

    def load(self, round_index: int) -> None:
        """Hold round ``round_index``'s rows (gathered unless they are the ones held)."""
        if round_index != self.loaded:
            sample = self.batch.round_sample(round_index, ROUND_ROWS)
            self.arrays = with_rows(self.arrays, sample)
            self.loaded = round_index

    def run(self, cfg, until: int, after_each: Callable[[], None] | None = None) -> bool:
        """Iterate until iteration ``until`` is done, each iteration on its round's rows;
        False if the deadline stopped it first."""
        if after_each is not None:
            raise ValueError("rounds on partitions take no step after each iteration")

        def advance(count: int) -> None:
            while count > 0:
                done = self.iteration
                self.load(done // ROUND_ITERATIONS)
                step = min(count, ROUND_ITERATIONS - done % ROUND_ITERATIONS)
                run_iterations(self.arrays, cfg, self.state, step)
                count -= step

        self.loop.iteration = self.iteration
        return self.loop.run(advance, until)

    def rounds(self) -> dict[str, int]:
        """What the rounds cost so far, for the algorithm's record."""
        return {"round_iterations": ROUND_ITERATIONS, "round_rows": ROUND_ROWS,
                "rounds": self.loaded + 1}


def rounds_to_tolerance(driver: RoundDriver, cfg, count: int, candidates: Candidates, *,
                        tolerance: float, auto_gamma: bool = False):
    """``iterations: "auto"`` on rounds (module docstring), ``count`` candidates per stage.

    Returns (the final config, stats: ``stopped_by`` "converged" or "time_limit",
    ``stages``, and ``estimated_gap`` once three stages have finished)."""
    arrays, problem = driver.arrays, driver.problem
    stage_end = max(AUTO_WARMUP_MIN,
                    AUTO_WARMUP_PER_ROW * (arrays.lower.shape[0] + arrays.rhs.shape[0]))
    if cfg.step_rule != STEP_SCHEDULE:
        cfg = warm_up(driver, cfg, driver.iteration + stage_end)
    values: list[float] = []
    stats: dict = {"stopped_by": "time_limit"}
    while True:
        start, stage_end = driver.iteration, 2 * max(driver.iteration, stage_end)
        driver.loop.total_iterations = stage_end
        cfg, finished = run_phase(driver, cfg, start, stage_end, count, candidates,
                                  auto_gamma=auto_gamma and len(values) < GAMMA_STAGES)
        if not finished:
            break
        point = project(driver.average(), problem.constraints, problem.lower,
                        problem.upper).solution
        values.append(float(driver.batch.values(point, driver.arrays)[0]))
        gap = estimated_gap(values)
        if len(values) >= 3:
            stats["estimated_gap"] = gap
        if gap <= tolerance:
            stats["stopped_by"] = "converged"
            break
    return cfg, stats | {"stages": len(values) + (0 if finished else 1)}
