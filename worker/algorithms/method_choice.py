"""``solver.algorithm: "auto"``: the method that reaches the tolerance fastest, and why.

In this order (the first that applies):

1. rate constraints: ``proxy_lagrangian`` (their rates have no gradient; only the games
   handle them, Cotter et al. 2019).
2. a differentiable objective (not the hinge) whose only constraint is the box: ``lbfgsb``.
   L-BFGS-B costs one pass over the data per iteration and needs tens to hundreds of them
   for 1e-9; SGD needs millions of samples for 1e-3 (Adult, n = 32,561, d = 125: 0.3 s
   against 76 s, docs/method-choice.md).
3. a program small enough: ``exact_qp`` (hinge LP through HiGHS; QPs through Clarabel) or
   ``exact_conic`` (logistic through Clarabel's exponential cones). Interior points take
   20-60 iterations whatever the tolerance, each a sparse factorization whose cost grows
   with the program's nonzeros (:func:`exact_work`) and the fill-in of d coupled
   coordinates, so they win below a size and lose above it. Exact when
   ``exact_work <= EXACT_MAX_WORK`` and ``d <= EXACT_MAX_D``; the limits are the crossovers
   measured by ``bench/method_crossover.py`` (docs/method-choice.md). The LightTouch paper's
   lattice (d = 4,096, m = 24,576, n = 612,587; Clarabel 800-1,000 s, LightTouch 1% in
   4.5 s) is far beyond both.
4. otherwise the LightTouch family (LightTouch paper, §3.2): FullTouch when m <= 16
   (checking everything is as cheap as sampling) — Epro-SGD instead when l2 > 0, Epro-ORDA
   when also l1 > 0 (O(1/T) rates, and ORDA's proximal steps measured 7-19x closer than
   Epro-SGD with l1, bench/results/epro_rate.json) — and LightTouch above 16.

Networks, softmax and robust ``max_of`` objectives never come here: the network games
solve them (:mod:`worker.pipeline.network`). SVRG OL runs when asked for
(``solver.algorithm: "svrg_ol"``), which is also what partitions a big file.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.algorithms.conic_form import HINGE, LOGISTIC, SQUARED, SQUARED_HINGE
from worker.algorithms.lbfgsb import smooth_box_only
from worker.problem.compiled import CompiledProblem

FULLTOUCH_MAX_M = 16
#: The largest program an exact method takes, in :func:`exact_work` nonzeros, and the most
#: coordinates (measured crossovers, docs/method-choice.md).
EXACT_MAX_WORK = 2_000_000
EXACT_MAX_D = 2_000
#: Exponential cones cost this many times a QP's nonzero (measured, docs/method-choice.md).
CONIC_FACTOR = 4


@dataclass(frozen=True)
class Choice:
    """The method ``auto`` chose and the reason, as ``stats.method`` / ``method_reason``."""

    name: str
    reason: str


def exact_work(problem: CompiledProblem) -> int:
    """The nonzeros of the exact method's program (:mod:`.conic_form`): the data's or Q's
    (d^2 for squared loss's Gram form), two per example for a loss variable, the constraint
    rows', times :data:`CONIC_FACTOR` for the logistic's cones."""
    objective = problem.objective
    kind, n, d = objective.kind, objective.n, problem.d
    data = {SQUARED: d * d, HINGE: objective.features.nnz + 2 * n,
            SQUARED_HINGE: objective.features.nnz + 2 * n,
            LOGISTIC: CONIC_FACTOR * (objective.features.nnz + 6 * n)
            }.get(kind, objective.quadratic.nnz)
    return int(data + problem.constraints.matrix.nnz + 4 * d)


def choose_method(problem: CompiledProblem) -> Choice:
    """``auto``'s method for a compiled (linear-model) problem (module docstring)."""
    if problem.rates is not None:
        return Choice("proxy_lagrangian", "rate constraints: only the games handle them")
    if smooth_box_only(problem):
        return Choice("lbfgsb", "smooth objective, only the box: quasi-Newton")
    work = exact_work(problem)
    if work <= EXACT_MAX_WORK and problem.d <= EXACT_MAX_D:
        name = "exact_conic" if problem.objective.kind == LOGISTIC else "exact_qp"
        return Choice(name, f"small program ({work:,} <= {EXACT_MAX_WORK:,} nonzeros, "
                            f"d = {problem.d:,} <= {EXACT_MAX_D:,}): interior point")
    size = (f"program of {work:,} nonzeros, d = {problem.d:,} (exact up to "
            f"{EXACT_MAX_WORK:,} and {EXACT_MAX_D:,})")
    return Choice(iterative_method(problem), f"{size}: the LightTouch family")


def iterative_method(problem: CompiledProblem) -> str:
    """The LightTouch family's member for the problem (rule 4 of the module docstring)."""
    if problem.m <= FULLTOUCH_MAX_M:
        if problem.objective.l2 > 0:
            return "epro_orda" if problem.objective.l1 > 0 else "epro_sgd"
        return "fulltouch"
    return "lighttouch"
