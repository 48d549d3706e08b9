"""When ``iterations: "auto"`` stops: a certificate where one exists, otherwise an estimate
from doubling stages. Every open-ended run reports why it stopped in ``stopped_by``:

=============  ==========================================================================
stopped_by     meaning
=============  ==========================================================================
certificate    a feasible point's objective is within ``tolerance`` of a proven lower
               bound (:mod:`worker.algorithms.bounds.certificate`)
converged      the estimate below says the answer will not improve by more than
               ``tolerance``
iterations     a fixed ``iterations`` budget ran out
time_limit     ``time_limit_s`` ran out first
=============  ==========================================================================

The estimate: stage k ends at iteration T_k = 2 T_(k-1) and values V_k of the stage's answer
are compared. For an SGD-type method V_k - V* falls like C / sqrt(T_k), so
V_(k-1) - V_k = (sqrt(2) - 1) (V_k - V*) and the remaining gap is about
(V_(k-1) - V_k) / (sqrt(2) - 1). The run stops when that estimate, from the larger of the
last two differences (one can be lucky noise), is at most ``tolerance * |V_k|``. V_k is what
the run would answer: the objective of the projected running average on linear constraints
(not the penalized objective of the average itself, whose gamma times a small violation
dominated and kept a QP whose answer was far within the tolerance of its optimum running
for its whole time limit: docs/stopping-rules.md#the-estimate-doubling-stages), the
expected objective of the mixture the shrinking LP makes of the stage's snapshots for the
games.
Games take the differences either way (``two_sided``): their mixture starts infeasible and
its objective rises while the multipliers enforce the constraints, and a one-sided estimate
read such a rise as "no improvement left".

Where the objective has a known ``lower`` bound (a network's mean loss plus its penalties is
at least 0), no answer improves on V_k by more than V_k - lower, so the gap is the smaller of
that and the estimate. On separable data the loss falls geometrically towards 0, about
halving per stage, so the last improvement keeps exceeding the absolute ``tolerance`` until
the loss is a few times smaller than it, and the bound stops such a run stages earlier
(measured on a one-hidden-layer MLP on digits: docs/stopping-rules.md#the-estimate-doubling-stages).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from worker.algorithms.bounds.certificate import Certificate, certify, strong_convexity
from worker.candidates.snapshots import Candidates
from worker.kernels.layout import ProblemArrays
from worker.problem.compiled import CompiledProblem

#: 1 / (sqrt(2) - 1): remaining gap over the last improvement of a doubling stage.
GAP_PER_IMPROVEMENT = 1.0 / (math.sqrt(2.0) - 1.0)
#: Certificates take at most this share of a run's time (they project and evaluate f on
#: every example, and L-BFGS-B may evaluate it 200 times more).
CERTIFICATE_SHARE = 0.1
#: :class:`SnapshotBound`'s tests take at most this share of a run's time: on that MLP the
#: run then stops within a few snapshots of the first that passes (measured:
#: docs/stopping-rules.md#the-estimate-doubling-stages).
SNAPSHOT_BOUND_SHARE = 0.02
#: Stages ending before this iteration do not feed the estimate (Epro's first epochs are 8,
#: 16, 32 steps, in which the iterates have barely moved); certificates need no such wait.
ESTIMATE_AFTER = 2**14


def estimated_gap(values: list[float], scale: float = 1e-12, two_sided: bool = False
                  ) -> float:
    """Remaining gap from the last two stage improvements (inf until three), relative to the
    last value, or to ``scale`` where the value is smaller; ``two_sided``: from the last two
    changes either way (a rise counts as much as a fall)."""
    if len(values) < 3:
        return math.inf
    changes = [values[-3] - values[-2], values[-2] - values[-1]]
    if two_sided:
        changes = [abs(change) for change in changes]
    return GAP_PER_IMPROVEMENT * max(*changes, 0.0) / max(abs(values[-1]), scale)


@dataclass
class StageEstimate:
    """The estimate of the module docstring over a run's stage values."""

    tolerance: float
    #: values smaller than this are judged against it: the gap is absolute below it
    scale: float = 1e-12
    #: a rise between stages counts as unfinished progress (games, whose answer approaches
    #: from below while the multipliers enforce the constraints), not as no progress
    two_sided: bool = False
    #: a lower bound on the objective (-inf: none known); the gap is at most V_k - lower
    lower: float = -math.inf
    values: list[float] = field(default_factory=list)
    gap: float = math.inf

    def converged(self, value: float) -> bool:
        """Record a finished stage's value; whether the estimated gap is within tolerance."""
        self.values.append(float(value))
        self.gap = estimated_gap(self.values, self.scale, self.two_sided)
        if math.isfinite(self.lower):
            bound = max(float(value) - self.lower, 0.0) / max(abs(float(value)), self.scale)
            self.gap = min(self.gap, bound)
        return self.gap <= self.tolerance

    def restart(self) -> None:
        """Forget earlier stages (their values measure another problem, e.g. another
        penalty weight)."""
        self.values.clear()
        self.gap = math.inf

    def stats(self) -> dict:
        """``estimated_gap`` once it is known."""
        return {"estimated_gap": self.gap} if math.isfinite(self.gap) else {}


@dataclass
class SnapshotBound:
    """The lower-bound test of :class:`StageEstimate` on one snapshot, between a stage's
    ends: stop once V - lower <= tolerance * max(|V|, scale) with its violation at most
    ``violation``. A doubling stage's own test can run up to twice the iterations needed
    (measured: docs/stopping-rules.md#the-estimate-doubling-stages). Its evaluations (every
    row at one point) take at most :data:`SNAPSHOT_BOUND_SHARE` of the run's time.

    ``value`` maps (points (C, P), weights (C,)) to (objective, largest expected violation,
    the tolerance's statistical floor), as the games' mixture value does.
    """

    value: Callable[[np.ndarray, np.ndarray], tuple[float, float, float]]
    lower: float
    tolerance: float
    scale: float
    violation: float
    spent_s: float = 0.0
    checks: int = 0

    def holds(self, point: np.ndarray, run_s: float) -> bool:
        """Whether the test passes at ``point`` (P,) after ``run_s`` seconds of the run;
        False without a test when the checks have used their share."""
        if self.spent_s > SNAPSHOT_BOUND_SHARE * run_s:
            return False
        began = time.perf_counter()
        objective, violation, floor = self.value(point[None, :], np.ones(1))
        self.spent_s += time.perf_counter() - began
        self.checks += 1
        gap = max(objective - self.lower, 0.0) / max(abs(objective), self.scale)
        return violation <= self.violation and gap <= max(self.tolerance, floor)


@dataclass
class BoundedStages:
    """What a rule with certificates keeps over a run's stages: the estimate, the best lower
    bound so far (every stage's stays valid) and the upper end of the latest certificate."""

    arrays: ProblemArrays
    problem: CompiledProblem
    tolerance: float
    estimate: StageEstimate = field(init=False)
    lower: float = -math.inf
    upper: float = math.inf

    def __post_init__(self) -> None:
        self.estimate = StageEstimate(self.tolerance)

    @property
    def gap(self) -> float:
        """The best certified relative gap so far (inf without a lower bound)."""
        return Certificate(self.upper, self.lower, np.zeros(0)).gap


@dataclass
class CertifiedStages(BoundedStages):
    """Stopping on linear constraints: a certificate when its cost fits in
    :data:`CERTIFICATE_SHARE` of the run, the estimate on the projected average otherwise.

    Each certificate's feasible point is added to the candidates as ``"projected"`` and is
    the upper end.
    """

    spent_s: float = 0.0
    certificates: int = 0
    #: What the estimate's values measure: "projected" or "penalized".
    measured: str = "projected"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.sigma = strong_convexity(self.problem) if self.problem.rates is None else 0.0

    def stop(self, average: np.ndarray, penalized: float, elapsed_s: float,
             candidates: Candidates, iteration: int, checks: int) -> str | None:
        """After a stage: "certificate", "converged" or None (run another stage)."""
        found = None
        if iteration < ESTIMATE_AFTER:          # too early for the estimate's doubling law
            penalized = math.nan
        if self.spent_s <= CERTIFICATE_SHARE * elapsed_s:
            began = time.perf_counter()
            found = certify(self.arrays, self.problem, average, self.sigma, self.tolerance)
            self.spent_s += time.perf_counter() - began
        if found is None:
            return self._converged("penalized", penalized)
        self.certificates += 1
        candidates.add(found.point, iteration, "projected", checks, elapsed_s)
        self.lower = max(self.lower, found.lower)     # every stage's bound stays valid
        self.upper = found.upper          # the latest point: the shrinking LP keeps it
        if self.gap <= self.tolerance:
            return "certificate"
        return self._converged("projected", found.upper if iteration >= ESTIMATE_AFTER
                               else math.nan)

    def _converged(self, measured: str, value: float) -> str | None:
        if math.isnan(value):
            return None
        if measured != self.measured:              # values of another kind do not compare
            self.estimate.restart()
            self.measured = measured
        return "converged" if self.estimate.converged(value) else None

    def stats(self) -> dict:
        """The estimate, and the certificate's bounds once there is one."""
        stats = self.estimate.stats() | {"certificates": self.certificates}
        if math.isfinite(self.lower):
            stats |= {"dual_bound": self.lower, "certified_upper": self.upper,
                      "certified_gap": self.gap}
        return stats
