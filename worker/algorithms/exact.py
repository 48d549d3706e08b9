"""Exact methods: a plain hinge loss as one LP through HiGHS, every other objective as one
QP (``exact_qp``) or exponential-cone program (``exact_conic``, logistic) through Clarabel.

================  ========================================================================
method            solves
================  ========================================================================
exact_qp          hinge without l1 or l2: the LP of :mod:`worker.candidates.hinge_lp` with
                  every example kept (d + n variables, m + n rows), HiGHS's interior point;
                  hinge with l1 or l2, squared, squared_hinge, quadratic: the QP of
                  :mod:`.conic_form` by Clarabel's interior point
exact_conic       the same, and the logistic loss through exponential cones (:mod:`.conic_form`)
================  ========================================================================

Both take the linear, ordering and lattice rows A w <= b and the box as they are; interior
points need no step or tolerance from the user (the solvers' own, 1e-8 relative, are far below
``solver.tolerance``). The answer is one candidate, certified by the Lagrangian bound of
:mod:`.certificate` from the solver's multipliers: ``stats.lower_bound``,
``stats.gap``. ``stats.stopped_by`` is ``"optimal"``, ``"almost_optimal"`` (Clarabel's
reduced tolerances), ``"time_limit"`` or the solver's status; an infeasible or unbounded
problem raises :class:`~worker.errors.SolverError` naming what to change.
"""

from __future__ import annotations

import time

import clarabel
import highspy
import numpy as np

from worker.algorithms.conic_form import LOGISTIC, conic_program
from worker.algorithms.loop import ProgressCallback
from worker.algorithms.one_answer import certificate_stats, one_answer, refuse
from worker.algorithms.options import SolverOptions, Trajectory
from worker.candidates.hinge_lp import has_hinge_lp, piecewise_lp, signed_rows
from worker.candidates.polish import run_highs
from worker.errors import SolverError
from worker.problem.compiled import CompiledProblem

#: Clarabel's statuses -> ``stats.stopped_by``.
CLARABEL_STATUS = {"Solved": "optimal", "AlmostSolved": "almost_optimal",
                   "MaxTime": "time_limit", "MaxIterations": "iteration_limit"}
INFEASIBLE = ("no point of the box satisfies every constraint ({solver}: {status}); check the "
              "constraints' right-hand sides and the bounds")
UNBOUNDED = ("the objective decreases without bound over the constraints ({solver}: {status});"
             " give finite bounds or an l2 weight")


def run_exact_qp(problem: CompiledProblem, options: SolverOptions,
                 progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """The exact LP or QP (module docstring); logistic objectives need ``exact_conic``."""
    if problem.objective.kind == LOGISTIC:
        raise refuse("exact_qp", "solves LPs and QPs; the logistic loss needs exact_conic")
    return _run_exact("exact_qp", problem, progress, deadline)


def run_exact_conic(problem: CompiledProblem, options: SolverOptions,
                    progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """The exact LP, QP or exponential-cone program (module docstring)."""
    return _run_exact("exact_conic", problem, progress, deadline)


def _run_exact(name: str, problem: CompiledProblem, progress: ProgressCallback | None,
               deadline: float) -> Trajectory:
    began = time.perf_counter()
    seconds = max(deadline - began, 1e-3)
    solve = _hinge_lp if has_hinge_lp(problem) else _clarabel
    w, multipliers, hinge_weights, stats = solve(problem, seconds)
    stats |= certificate_stats(problem, np.clip(w, problem.lower, problem.upper), multipliers,
                               hinge_weights)
    return one_answer(name, problem, w, stats, began, progress)


def _hinge_lp(problem: CompiledProblem, seconds: float):
    """The whole hinge LP by HiGHS: (w, y, alpha, stats)."""
    signed = signed_rows(problem)
    n = signed.shape[0]
    everyone = np.arange(n)
    lp = piecewise_lp(problem, signed, np.zeros(n), everyone, problem.lower, problem.upper)
    highs = run_highs(lp, seconds)
    status = highs.getModelStatus()
    text = highs.modelStatusToString(status).lower()
    if status == highspy.HighsModelStatus.kInfeasible:
        raise SolverError(INFEASIBLE.format(solver="HiGHS", status=text))
    if status in (highspy.HighsModelStatus.kUnbounded,
                  highspy.HighsModelStatus.kUnboundedOrInfeasible):
        raise SolverError(UNBOUNDED.format(solver="HiGHS", status=text))
    solution = highs.getSolution()
    x, duals = np.array(solution.col_value), -np.array(solution.row_dual)
    if x.size != lp.cost.size:                           # stopped before it had a point
        x, duals = np.zeros(lp.cost.size), np.zeros(lp.right.size)
    stopped_by = {highspy.HighsModelStatus.kOptimal: "optimal",
                  highspy.HighsModelStatus.kTimeLimit: "time_limit"}.get(status, text)
    m = problem.m
    return (x[:problem.d], duals[:m], n * duals[m:], {"stopped_by": stopped_by, "solver":
            "highs", "solver_iterations": int(highs.getInfo().ipm_iteration_count)})


def _clarabel(problem: CompiledProblem, seconds: float):
    """The conic program by Clarabel: (w, y, alpha or None, stats)."""
    program = conic_program(problem)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.time_limit = float(seconds)
    solver = clarabel.DefaultSolver(program.P, program.q, program.A, program.b, program.cones,
                                    settings)
    solution = solver.solve()
    status = str(solution.status)
    if "PrimalInfeasible" in status:
        raise SolverError(INFEASIBLE.format(solver="Clarabel", status=status))
    if "DualInfeasible" in status:
        raise SolverError(UNBOUNDED.format(solver="Clarabel", status=status))
    x, z = np.array(solution.x), np.array(solution.z)
    if not np.isfinite(x).all():
        x, z = np.zeros_like(x), np.zeros_like(z)
    m, n, rows = program.m, problem.n, program.hinge_rows
    alpha = None if rows is None else n * z[rows:rows + n]
    return (x[:program.d], z[:m], alpha,
            {"stopped_by": CLARABEL_STATUS.get(status, status.lower()), "solver": "clarabel",
             "solver_iterations": int(solution.iterations)})
