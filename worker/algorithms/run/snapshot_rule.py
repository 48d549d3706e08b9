"""When SVRG OL's ``iterations: "auto"`` stops: at a round's batch phase, from the full
gradient the round computes anyway (Cutkosky & Busa-Fekete, Algorithm 1 line 5).

A batch over every row (N^_k >= n) gives L(v_k) and g = grad L(v_k) at the anchor v_k, the
previous round's average (a candidate), in the one pass over the partitions that the round
makes in any case (:func:`~worker.kernels.svrg.gradient_sum`). For a convex loss the tangent
is a minorant, L(w) >= L(v_k) + g . (w - v_k), so

    f* >= L(v_k) - g . v_k + sum_j min_{l_j <= t <= u_j} [g_j t + l1 |t| + (l2/2) t^2]

(:func:`~worker.algorithms.bounds.dual_bound.minorant_bound` without multipliers; tight at the
optimum, where it is the Frank-Wolfe gap of the box when l2 = 0), and
f(v_k) = L(v_k) + l1 ||v_k||_1 + (l2/2) ||v_k||^2 is the upper end. The best bound of the
rounds so far is kept (every one is valid). The run stops before the round's serial phase,
``stopped_by: "certificate"``, once the relative gap is within ``tolerance`` (the convention
of :class:`~worker.algorithms.bounds.certificate.Certificate`, as for the LightTouch family).

There is no certificate when the problem has linear constraints (v_k need not be feasible
and the bound would need multipliers), for the hinge (its tangent is a subgradient's: valid
but loose) or when the bound is -inf (an infinite side of the box, l2 = 0 and a slope beyond
l1). There the penalized value f(v_k) + gamma [max_i g_i(v_k)]_+ feeds the doubling-stage
estimate of :mod:`worker.algorithms.run.stopping` (``stopped_by: "converged"``), at rounds that
end at least twice as late as the last one it took: the practical schedule's rounds are of
equal length, and the estimate's law holds for stages that double. Rounds whose batch is a
sample of the rows decide nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from worker.algorithms.bounds.dual_bound import minorant_bound
from worker.algorithms.bounds.smooth_part import regularizer
from worker.algorithms.run.one_answer import gap_stats
from worker.algorithms.run.stopping import ESTIMATE_AFTER, BoundedStages
from worker.distributed.batch import BatchGradient
from worker.kernels.constraints import max_violation
from worker.losses import is_smooth


@dataclass
class SnapshotRule(BoundedStages):
    """The module docstring's rule over a run's rounds.

    Parameters
    ----------
    arrays : ProblemArrays
        The constraints, for the penalty of the estimate's values.
    problem : CompiledProblem
    tolerance : float
    """

    #: the iteration of the estimate's last value
    estimated_at: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.certifies = self.problem.m == 0 and is_smooth(self.problem.objective.kind)

    def stop(self, anchor: np.ndarray, gradient: BatchGradient, gamma: float,
             iteration: int) -> str | None:
        """After the batch phase at ``anchor`` v_k (shape (d,)), ``iteration`` serial steps
        into the run: "certificate", "converged" or None (run the round)."""
        if not gradient.exact:
            return None
        value = gradient.loss + regularizer(self.problem.objective, anchor)
        if self.certifies:
            bound = minorant_bound(self.problem, gradient.loss - float(gradient.mean @ anchor),
                                   gradient.mean, np.zeros(0))
            if math.isfinite(bound):
                self.lower, self.upper = max(self.lower, bound), value
                return "certificate" if self.gap <= self.tolerance else None
        if iteration < max(ESTIMATE_AFTER, 2 * self.estimated_at):
            return None
        self.estimated_at = iteration
        penalty = gamma * max(0.0, float(max_violation(self.arrays, anchor)))
        return "converged" if self.estimate.converged(value + penalty) else None

    def stats(self) -> dict:
        """The certificate's ``lower_bound``, ``gap``, ``relative_gap`` and ``certificate``
        (:func:`~worker.algorithms.run.one_answer.gap_stats`: of the last certified anchor), or
        ``certificate: "none"``; the estimate's ``estimated_gap`` once it is known."""
        return gap_stats(self.upper, self.lower) | self.estimate.stats()
