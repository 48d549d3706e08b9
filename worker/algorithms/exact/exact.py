"""Exact methods: one interior-point program through Clarabel, a QP (``exact_qp``: hinge,
squared, squared_hinge and quadratic objectives, the hinge's LP included) or an
exponential-cone program (``exact_conic``: the logistic loss, and everything exact_qp takes).

The program is :mod:`.conic_form`'s: the linear, ordering and lattice rows A w <= b and the
box as they are, l1 and l2 terms included. Interior points need no step or tolerance from the
user (Clarabel's own, 1e-8 relative, are far below ``solver.tolerance``). Both methods use
Clarabel: on the hinge LPs of ``bench/method_crossover.py`` HiGHS's interior point (without
crossover, as the polish runs it) and its simplex took longer (measured:
docs/method-choice.md#where-the-crossover-lies-measured).

The answer is one candidate, certified by the Lagrangian bound of
:mod:`worker.algorithms.bounds.dual_bound` from
Clarabel's multipliers: ``stats.lower_bound``, ``stats.gap``. ``stats.stopped_by`` is
``"optimal"``, ``"almost_optimal"`` (Clarabel's reduced tolerances), ``"time_limit"`` or
Clarabel's status; an infeasible or unbounded problem raises
:class:`~worker.errors.SolverError` naming what to change.
"""

from __future__ import annotations

import time

import clarabel
import numpy as np
import scipy.sparse as sp

from worker.algorithms.exact.conic_form import conic_program
from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.one_answer import certificate_stats, one_answer
from worker.algorithms.run.options import SolverOptions
from worker.candidates.dual_certificate import alpha_of_duals
from worker.candidates.trajectory import Trajectory
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
    """The exact LP or QP (module docstring); a loss with exponential cones (the logistic)
    needs ``exact_conic`` (refused by :func:`worker.algorithms.registry.run_choice`)."""
    return _run_exact("exact_qp", problem, progress, deadline)


def run_exact_conic(problem: CompiledProblem, options: SolverOptions,
                    progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """The exact LP, QP or exponential-cone program (module docstring)."""
    return _run_exact("exact_conic", problem, progress, deadline)


def _run_exact(name: str, problem: CompiledProblem, progress: ProgressCallback | None,
               deadline: float) -> Trajectory:
    began = time.perf_counter()
    seconds = max(deadline - began, 1e-3)
    w, multipliers, hinge_weights, stats = _clarabel(problem, seconds)
    stats |= certificate_stats(problem, np.clip(w, problem.lower, problem.upper), multipliers,
                               hinge_weights)
    return one_answer(name, problem, w, stats, began, progress)


def _clarabel(problem: CompiledProblem, seconds: float):
    """The conic program by Clarabel: (w, y, alpha or None, stats)."""
    program = conic_program(problem)
    x, z, stats = clarabel_solve(program.P, program.q, program.A, program.b, program.cones,
                                 seconds)
    m, n, rows = program.m, problem.n, program.hinge_rows
    alpha = None if rows is None else alpha_of_duals(n * z[rows:rows + n],
                                                    problem.objective.example_weights())
    return x[:program.d], z[:m], alpha, stats



def clarabel_solve(P: sp.csc_matrix, q: np.ndarray, A: sp.csc_matrix, b: np.ndarray,
                   cones: list, seconds: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """min (1/2) x'Px + q'x s.t. A x + s = b, s in ``cones``, by Clarabel within ``seconds``:
    x (N,), the duals z (R,) (zeros when Clarabel returned no finite point) and the stats
    ``stopped_by``, ``solver``, ``solver_iterations``; an infeasible or unbounded program
    raises :class:`~worker.errors.SolverError`."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.time_limit = float(seconds)
    solution = clarabel.DefaultSolver(P, q, A, b, cones, settings).solve()
    status = str(solution.status)
    if "PrimalInfeasible" in status:
        raise SolverError(INFEASIBLE.format(solver="Clarabel", status=status))
    if "DualInfeasible" in status:
        raise SolverError(UNBOUNDED.format(solver="Clarabel", status=status))
    x, z = np.array(solution.x), np.array(solution.z)
    if not np.isfinite(x).all():
        x, z = np.zeros_like(x), np.zeros_like(z)
    return x, z, {"stopped_by": CLARABEL_STATUS.get(status, status.lower()),
                  "solver": "clarabel", "solver_iterations": int(solution.iterations)}
