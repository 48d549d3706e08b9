"""The exact optimum of a hinge-loss problem with linear constraints, by exact LP solvers,
cached on disk by a hash of the compiled problem.

A compiled problem with ``kind = hinge`` (``pairwise_hinge`` compiles to hinge on the rows
``x+ - x-`` with label 1), ``l2 = l1 = 0`` and no quadratic part is the linear program

    min_{w, xi}  (1/n) sum_i xi_i   s.t.  xi_i >= 1 - y_i x_i . w,  xi >= 0,
                                         A w <= b,  lower <= w <= upper,

whose optimal value is the objective's minimum over the feasible set: the yardstick every
benchmark measures its answers against. Solvers, all exact to their tolerances:

* ``highs-ipm``: HiGHS's interior point with crossover (a vertex solution);
* ``highs-pdlp``: HiGHS's first-order primal-dual LP solver (PDLP), at relative gap 1e-7;
* ``clarabel``: Clarabel's interior point, on the same LP through CVXPY.

``exact_optimum(problem, cache_dir)`` returns Clarabel's value (at the paper's size HiGHS's
interior point ran over 50 minutes where Clarabel needs about 13) and caches every solver's
value, seconds and status as ``<sha256>.json``. Run as a script on a spec to print
them: ``.venv/bin/python bench/exact_optimum.py SPEC.json [--solvers highs-ipm,clarabel]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import highspy
import numpy as np
import scipy.sparse as sp

from worker.losses import is_piecewise_linear
from worker.problem.compile import DataSource
from worker.problem.compiled import CompiledProblem
from worker.settings import data_settings

SOLVERS = ("highs-ipm", "highs-pdlp", "clarabel")
PDLP_GAP = 1e-7


def problem_hash(problem: CompiledProblem) -> str:
    """sha256 of every array that defines the LP (features, labels, A, b, bounds)."""
    digest = hashlib.sha256()
    objective, constraints = problem.objective, problem.constraints
    for matrix in (objective.features, constraints.matrix):
        for array in (matrix.indptr, matrix.indices, matrix.data):
            digest.update(np.ascontiguousarray(array).tobytes())
    for array in (objective.labels, constraints.rhs, problem.lower, problem.upper):
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()


def lp_arrays(problem: CompiledProblem):
    """(c, A_ub, b_ub, lower, upper) of the LP over ``[w (d), xi (n)]``.

    Raises
    ------
    ValueError
        When the problem is not a plain hinge loss with linear constraints.
    """
    objective = problem.objective
    if (not is_piecewise_linear(objective.kind) or objective.l2 or objective.l1
            or problem.rates is not None):
        raise ValueError("the exact LP covers hinge losses without l2, l1 or rate constraints")
    n, d = objective.features.shape
    margins = sp.diags(objective.labels) @ objective.features          # rows y_i x_i
    hinge_rows = sp.hstack([-margins, -sp.identity(n)])               # -y x.w - xi <= -1
    order_rows = sp.hstack([problem.constraints.matrix, sp.csr_matrix((problem.m, n))])
    a_ub = sp.vstack([hinge_rows, order_rows], format="csr")
    b_ub = np.concatenate([-np.ones(n), problem.constraints.rhs])
    c = np.concatenate([np.zeros(d), np.full(n, 1.0 / n)])
    lower = np.concatenate([problem.lower, np.zeros(n)])
    upper = np.concatenate([problem.upper, np.full(n, np.inf)])
    return c, a_ub, b_ub, lower, upper


def solve_highs(problem: CompiledProblem, method: str) -> dict:
    """HiGHS with ``solver = ipm`` (crossover on) or ``pdlp``: value, seconds, status."""
    c, a_ub, b_ub, lower, upper = lp_arrays(problem)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = c.size, a_ub.shape[0]
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = c, lower, upper
    lp.row_lower_, lp.row_upper_ = np.full(b_ub.size, -highspy.kHighsInf), b_ub
    csc = a_ub.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = (
        csc.indptr, csc.indices, csc.data)
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("solver", method)
    if method == "pdlp":
        highs.setOptionValue("pdlp_d_gap_tol", PDLP_GAP)
    highs.passModel(lp)
    start = time.perf_counter()
    highs.run()
    seconds = time.perf_counter() - start
    status = highs.modelStatusToString(highs.getModelStatus())
    return {"value": highs.getInfo().objective_function_value, "seconds": seconds,
            "status": status}


def solve_clarabel(problem: CompiledProblem) -> dict:
    """Clarabel through CVXPY on the same LP: value, seconds, status."""
    import cvxpy as cp

    objective = problem.objective
    w = cp.Variable(problem.d)
    margins = sp.diags(objective.labels) @ objective.features
    constraints = [w >= problem.lower, w <= problem.upper]
    if problem.m:
        constraints.append(problem.constraints.matrix @ w <= problem.constraints.rhs)
    lp = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - margins @ w)) / margins.shape[0]),
                    constraints)
    start = time.perf_counter()
    lp.solve(solver="CLARABEL")
    return {"value": float(lp.value), "seconds": time.perf_counter() - start,
            "status": lp.status}


def solve_with(problem: CompiledProblem, solver: str) -> dict:
    """One solver's record (see :data:`SOLVERS`)."""
    if solver == "clarabel":
        return solve_clarabel(problem)
    return solve_highs(problem, solver.removeprefix("highs-"))


def exact_records(problem: CompiledProblem, cache_dir: Path,
                  solvers: tuple[str, ...] = ("clarabel",)) -> dict[str, dict]:
    """Every requested solver's record, from ``cache_dir/<hash>.json`` or solved now."""
    path = cache_dir / f"{problem_hash(problem)}.json"
    records = json.loads(path.read_text()) if path.exists() else {}
    for solver in solvers:
        if solver not in records:
            records[solver] = solve_with(problem, solver)
            cache_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(records, indent=2))
    return records


def exact_optimum(problem: CompiledProblem, cache_dir: Path) -> float:
    """The exact optimal value (Clarabel), cached on disk."""
    record = exact_records(problem, cache_dir)["clarabel"]
    if record["status"] != "optimal":
        raise RuntimeError(f"Clarabel did not solve the LP: {record['status']}")
    return record["value"]


def main(argv: list[str] | None = None) -> None:
    """Print the exact records of a spec's problem."""
    from worker.problem.compile import compile_problem
    from worker.spec.models import parse_spec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--solvers", default="clarabel")
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(__file__).resolve().parent / "cache" / "exact")
    args = parser.parse_args(argv)
    spec = parse_spec(json.loads(args.spec.read_text()))
    problem = compile_problem(spec, DataSource([args.spec.resolve().parent, Path.cwd()],
                                               data_settings()))
    records = exact_records(problem, args.cache_dir, tuple(args.solvers.split(",")))
    print(json.dumps(records, indent=2))


if __name__ == "__main__":
    main()
