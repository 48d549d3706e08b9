"""L-BFGS-B (Byrd, Lu, Nocedal & Zhu 1995; scipy's implementation) for smooth objectives whose
only constraint is the box: every smooth loss (:attr:`worker.losses.Loss.smooth`) and the
quadratic, with l2 and l1.

With l1 > 0 the objective is not differentiable at w_j = 0, so it runs on the split
w = u - v with u in [max(lower, 0), max(upper, 0)] and v in [max(-upper, 0), max(-lower, 0)]:
l1 ||w||_1 becomes the linear l1 sum(u + v), the problems have the same minimum (at an optimum
u_j v_j = 0), and the split box holds exactly the w of the original box.

It stops when scipy's projected-gradient test (``pgtol`` :data:`GRADIENT_TOLERANCE`) or its
relative-decrease test passes (a step lowering f by less than :data:`DECREASE_SHARE` times
``solver.tolerance``, relatively: 1e-6 by default),
at the deadline (``"time_limit"``) or after :data:`MAX_ITERATIONS`. Its BLAS calls act on
vectors of d and 2 x 10 correction pairs, on one BLAS thread (:mod:`worker.blas`). The answer is one
candidate certified by the box-only Lagrangian bound of :mod:`worker.algorithms.bounds.dual_bound`
(finite when the
box is, or l2 > 0).

With the examples left in partitions (``source``: a job ``auto`` placed on a Dask cluster,
docs/scale.md), every evaluation is one map-reduce over the partitions: the workers return
their rows' loss and gradient sums at w (SVRG OL's batch phase over every row,
:meth:`~worker.distributed.batch.PartitionedBatch.gradient`), so the driver holds d-vectors
and the correction pairs, never a row, and the iterates are the in-process ones up to the
order of the sums.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from scipy.optimize import fmin_l_bfgs_b

from worker.algorithms.bounds.smooth_part import loss_value_and_gradient, regularizer
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.one_answer import (
    answer_trajectory,
    certificate_stats,
    one_answer,
    refuse,
)
from worker.algorithms.run.options import SolverOptions
from worker.blas import one_blas_thread
from worker.candidates.trajectory import Trajectory
from worker.distributed.batch import PartitionedBatch
from worker.losses import is_smooth
from worker.problem.compiled import CompiledProblem
from worker.problem.csr import for_products

GRADIENT_TOLERANCE = 1e-8
#: Stop when a step lowers f by less than this share of ``solver.tolerance`` (relatively).
DECREASE_SHARE = 1e-3
MAX_ITERATIONS = 15_000
#: scipy's messages -> ``stats.stopped_by``.
STOPPED_BY = {0: "optimal", 1: "iteration_limit"}


class _Deadline(Exception):
    """Raised by the objective when the deadline has passed."""


def smooth_box_only(problem: CompiledProblem) -> bool:
    """Whether L-BFGS-B applies: no linear or rate constraints and a differentiable loss."""
    return problem.m == 0 and problem.rates is None and is_smooth(problem.objective.kind)


def run_lbfgsb(problem: CompiledProblem, options: SolverOptions,
               progress: ProgressCallback | None, deadline: float,
               source: PartitionedBatch | None = None) -> Trajectory:
    """L-BFGS-B from w = clip(0) on the (split, with l1) problem (module docstring);
    ``source``: the examples' partitions, open (else the compiled problem's rows)."""
    if not smooth_box_only(problem):
        raise refuse("lbfgsb", "takes smooth objectives whose only constraint is the box")
    began = time.perf_counter()
    objective = problem.objective
    loss = _remembering_last(_partitioned_loss(source) if source is not None else partial(
        loss_value_and_gradient, objective, rows=for_products(objective.features)))

    def smooth_part(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = loss(w)
        return value + 0.5 * objective.l2 * float(w @ w), gradient + objective.l2 * w

    w, stats = minimize_in_box(smooth_part, np.zeros(problem.d), problem.lower, problem.upper,
                               objective.l1, options.tolerance, deadline)
    w = np.clip(w, problem.lower, problem.upper)
    tangent = loss(w)
    stats |= certificate_stats(problem, w, np.zeros(0), tangent=tangent)
    if source is None:
        return one_answer("lbfgsb", problem, w, stats, began, progress)
    value = tangent[0] + regularizer(objective, w)
    return answer_trajectory("lbfgsb", w, lambda: (value, 0.0), stats, began, progress,
                             problem_arrays(problem, 1), source.phase_stats())


def _remembering_last(loss: Callable[[np.ndarray], tuple[float, np.ndarray]]
                      ) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """``loss`` answering again at the point it was last called at without evaluating it:
    the answer's tangent for the certificate is then the last evaluation's, not one more
    pass over the data."""
    last: dict[str, object] = {}

    def remembered(w: np.ndarray) -> tuple[float, np.ndarray]:
        key = np.ascontiguousarray(w, dtype=np.float64).tobytes()
        if last.get("key") != key:
            last.update(key=key, value=loss(w))
        return last["value"]
    return remembered


def _partitioned_loss(source: PartitionedBatch) -> Callable[[np.ndarray], tuple[float,
                                                                                np.ndarray]]:
    """w (d,) -> (the mean loss L(w), its gradient (d,)), each call one pass over every
    partition."""
    passes = itertools.count()

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        full = source.gradient(np.ascontiguousarray(w, dtype=np.float64), next(passes),
                               source.n)
        return full.loss, full.mean
    return loss


def minimize_in_box(smooth_part: Callable[[np.ndarray], tuple[float, np.ndarray]],
                    start: np.ndarray, lower: np.ndarray, upper: np.ndarray, l1: float,
                    tolerance: float, deadline: float) -> tuple[np.ndarray, dict]:
    """L-BFGS-B on smooth_part(w) + l1 ||w||_1 over the box (split when l1 > 0) from
    ``start`` clipped to the box, with the tests of the module docstring.

    Parameters
    ----------
    smooth_part : callable
        w (d,) -> (value, gradient (d,)) of the differentiable part of the objective.
    start : ndarray, shape (d,)
    lower, upper : ndarray, shape (d,)
    l1 : float
    tolerance : float
        ``solver.tolerance``.
    deadline : float
        A ``time.perf_counter()`` value.

    Returns
    -------
    w : ndarray, shape (d,)
        The answer, or the last point evaluated when the deadline passed.
    stats : dict
        ``solver``, ``stopped_by`` and (unless the deadline passed) ``solver_iterations``
        and ``evaluations``.
    """
    d, split = start.shape[0], l1 > 0
    last = {"w": np.clip(start, lower, upper)}

    def value_and_gradient(x: np.ndarray) -> tuple[float, np.ndarray]:
        if time.perf_counter() > deadline:
            raise _Deadline
        w = x[:d] - x[d:] if split else x
        last["w"] = w
        value, gradient = smooth_part(w)
        if not split:
            return value, gradient
        return value + l1 * float(x.sum()), np.concatenate([gradient + l1, l1 - gradient])

    bounds = _split_bounds(lower, upper) if split else np.column_stack([lower, upper])
    begin = np.concatenate([np.maximum(start, 0.0), np.maximum(-start, 0.0)]) if split \
        else start
    try:
        with one_blas_thread():
            x, _, info = fmin_l_bfgs_b(value_and_gradient,
                                       np.clip(begin, bounds[:, 0], bounds[:, 1]),
                                       bounds=_scipy_bounds(bounds),
                                       factr=DECREASE_SHARE * tolerance / np.finfo(float).eps,
                                       pgtol=GRADIENT_TOLERANCE, maxiter=MAX_ITERATIONS,
                                       maxfun=2 * MAX_ITERATIONS)
        w = x[:d] - x[d:] if split else x
        stats = {"stopped_by": STOPPED_BY.get(info["warnflag"], "stalled"),
                 "solver_iterations": int(info["nit"]), "evaluations": int(info["funcalls"])}
    except _Deadline:
        w, stats = last["w"], {"stopped_by": "time_limit"}
    return w, stats | {"solver": "lbfgsb"}


def _split_bounds(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Bounds (2d, 2) of (u, v) with w = u - v (module docstring) for the box (d,)."""
    positive = np.column_stack([np.maximum(lower, 0.0), np.maximum(upper, 0.0)])
    negative = np.column_stack([np.maximum(-upper, 0.0), np.maximum(-lower, 0.0)])
    return np.vstack([positive, negative])


def _scipy_bounds(bounds: np.ndarray) -> list[tuple[float | None, float | None]]:
    """scipy's (low, high) pairs, None for an infinite side."""
    return [(low if np.isfinite(low) else None, high if np.isfinite(high) else None)
            for low, high in bounds]
