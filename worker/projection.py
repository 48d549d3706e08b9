"""Exact Euclidean projection Π_g onto the feasible set (LightTouch paper).

Table 1 of the paper defines ``Π_g(w) = argmin_{w' in W : g(w') <= 0} ||w - w'||_2``; the last
line of Algorithms 1-4 returns ``Π_g(w̄)``. With W the box ``lower <= x <= upper`` and
``g = A x - b`` (:class:`worker.problem.compiled.ConstraintSet`) Π_g is the strongly convex QP
``argmin 1/2 ||x - point||^2  s.t.  lower <= x <= upper, A x <= b``. Paths (``method``):

* ``"clip"``: no constraints; the box projection is a per-coordinate clip.
* ``"isotonic"``: every row is an ordering ``(e_i - e_j)/sqrt(2) . x <= 0`` (``x_i <= x_j``),
  as the constraint types that compiled them declare (``constraints.orderings``, see
  :attr:`worker.problem.constraint_types.ConstraintType.orderings`; the rows themselves are
  not inspected), and the bounds are constant on each connected piece of the ordering
  graph; exact isotonic regression, then a clip (see :func:`_isotonic`). Chains
  (vertex-disjoint directed paths) take the pool-adjacent-violators algorithm; any other
  order (a lattice's monotonicity, a tree, a DAG) takes recursive minimum cuts
  (:mod:`worker.kernels.isotonic`), kept only when its KKT certificate holds within
  ``POLISH_TOL`` (otherwise the ``"qp"`` path runs).
* ``"qp"``: anything else; Clarabel's interior-point method with tight tolerances, an
  active-set polish certified by the KKT conditions (see :func:`_polish`), then a clip.

Outcomes are statuses, not exceptions: an empty feasible set gives ``status="infeasible"``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import clarabel
import numpy as np
import scipy.sparse as sp
from scipy.optimize import isotonic_regression
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from worker.kernels.isotonic import isotonic_on_order
from worker.problem.compiled import ConstraintSet

#: Residual violation (relative to max(1, |point|_inf, |b|_inf)) still labelled "optimal".
FEASIBILITY_TOL = 1e-7
#: Clarabel tolerances: tight enough that the residual violation is typically <= 1e-9.
CLARABEL_TOL = 1e-10
#: KKT residual, primal and dual tolerance (relative, as above) certifying a polished solution.
POLISH_TOL = 1e-9
#: Rounds of the primal-dual active-set polish after Clarabel.
POLISH_ROUNDS = 5
_INFEASIBLE = (clarabel.SolverStatus.PrimalInfeasible,
               clarabel.SolverStatus.AlmostPrimalInfeasible)


@dataclass(frozen=True)
class Projection:
    """Result of :func:`project`.

    Attributes
    ----------
    solution : ndarray, shape (d,)
        The projected point (always inside the box; the clipped point when infeasible).
    max_violation : float
        ``max(0, max(A x - b), max(lower - x), max(x - upper))`` of ``solution``.
    method : str
        ``"clip"``, ``"isotonic"`` or ``"qp"``.
    status : str
        ``"optimal"`` (exact path, KKT-certified polish, or Clarabel converged; and residual
        within ``FEASIBILITY_TOL``), ``"inaccurate"`` (otherwise) or ``"infeasible"`` (the
        feasible set is empty).
    seconds : float
        Wall-clock time of the projection.
    """

    solution: np.ndarray
    max_violation: float
    method: str
    status: str
    seconds: float


def project(point: np.ndarray, constraints: ConstraintSet, lower: np.ndarray,
            upper: np.ndarray, *, method: str = "auto") -> Projection:
    """Project ``point`` onto ``{lower <= x <= upper, A x <= b}`` in the Euclidean norm.

    Parameters
    ----------
    point : ndarray, shape (d,)
        Finite point to project (e.g. the averaged iterate w̄).
    constraints : ConstraintSet
        ``A`` of shape (m, d) and ``b`` of shape (m,).
    lower, upper : ndarray, shape (d,)
        Box W; entries may be ``-inf`` / ``+inf``.
    method : {"auto", "qp"}, keyword-only
        ``"auto"`` takes the isotonic path when it is exact; ``"qp"`` never does (with m = 0
        both clip).

    Returns
    -------
    Projection

    Raises
    ------
    ValueError
        On mismatched shapes, a non-finite point, NaN bounds or an unknown ``method``.
    """
    start = time.perf_counter()
    point, lower, upper = _checked(point, constraints, lower, upper, method)
    if constraints.m == 0:
        return _clip(point, lower, upper, start)
    if np.any(lower > upper):
        name, x, status = "clip", np.clip(point, lower, upper), "infeasible"
    elif method == "auto" and (x := _isotonic(point, constraints, lower, upper)) is not None:
        name, status = "isotonic", "optimal"
    else:
        name, (x, status) = "qp", _solve_qp(point, constraints, lower, upper)
    violation = _violation(x, constraints, lower, upper)
    if status == "optimal" and violation > FEASIBILITY_TOL * _scale(point, constraints.rhs):
        status = "inaccurate"
    return Projection(x, violation, name, status, time.perf_counter() - start)


def project_box(point: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> Projection:
    """Project ``point`` onto the box ``lower <= x <= upper`` alone: :func:`project` with no
    constraints, the ``"clip"`` path (a per-coordinate clip).

    Parameters
    ----------
    point : ndarray, shape (d,)
        Finite point to project.
    lower, upper : ndarray, shape (d,)
        Box W; entries may be ``-inf`` / ``+inf``.

    Returns
    -------
    Projection
        ``method="clip"``; ``status="infeasible"`` when some ``lower > upper``.

    Raises
    ------
    ValueError
        On mismatched shapes, a non-finite point or NaN bounds.
    """
    start = time.perf_counter()
    return _clip(*_checked_arrays(point, lower, upper, None), start)


def _clip(point: np.ndarray, lower: np.ndarray, upper: np.ndarray, start: float
          ) -> Projection:
    """The ``"clip"`` projection of checked arrays (d,), timed from ``start``."""
    x = np.clip(point, lower, upper)
    status = "infeasible" if np.any(lower > upper) else "optimal"
    return Projection(x, _box_violation(x, lower, upper), "clip", status,
                      time.perf_counter() - start)


def _checked(point, constraints, lower, upper, method):
    """Validate the method, shapes and values; float64 arrays of shape (d,)."""
    if method not in ("auto", "qp"):
        raise ValueError(f"method must be 'auto' or 'qp', got {method!r}")
    return _checked_arrays(point, lower, upper, constraints.matrix.shape[1])


def _checked_arrays(point, lower, upper, d: int | None):
    """Validate shapes (d,) (None: the point's length) and values; float64 arrays."""
    arrays = [np.asarray(a, dtype=np.float64) for a in (point, lower, upper)]
    d = arrays[0].shape[0] if d is None and arrays[0].ndim == 1 else d
    if any(a.shape != (d,) for a in arrays):
        raise ValueError(f"point, lower and upper must have shape ({d},), got "
                         f"{[a.shape for a in arrays]}")
    if not np.all(np.isfinite(arrays[0])) or np.isnan(arrays[1:]).any():
        raise ValueError("point must be finite and the bounds not NaN")
    return arrays


def _violation(x: np.ndarray, constraints: ConstraintSet, lower: np.ndarray,
               upper: np.ndarray) -> float:
    """max(0, max (A x - b), max (lower - x), max (x - upper)) for x of shape (d,)."""
    return max(float(np.max(constraints.values(x), initial=0.0)),
               _box_violation(x, lower, upper))


def _box_violation(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """max(0, max (lower - x), max (x - upper)) for x of shape (d,)."""
    return float(max(0.0, np.max(lower - x, initial=0.0), np.max(x - upper, initial=0.0)))


def _isotonic(point: np.ndarray, constraints: ConstraintSet, lower: np.ndarray,
              upper: np.ndarray) -> np.ndarray | None:
    """Exact projection when every row is a declared ordering (``constraints.orderings``), or
    None when this path does not apply.

    With scalar bounds [l, u] on a connected piece of the ordering graph, the projection onto
    the order and the box is ``clip(isotonic(y), l, u)``: the isotonic solution has the min-max
    form ``x_k = min_L max_U m(L ∩ U)`` over lower and upper sets (Robertson, Wright & Dykstra,
    *Order Restricted Statistical Inference*, 1988, Thm 1.4.4) where ``m(B)`` minimises the
    block's loss; with bounds, ``m(B) = clip(mean(y_B), l, u)``, and ``clip`` is nondecreasing so
    it commutes with max and min. With bounds varying on a piece this fails, so such
    constraints (and any non-ordering row) take the QP path. Coordinates on no ordering only see
    the box and are clipped.

    Parameters
    ----------
    point, lower, upper : ndarray, shape (d,)
    constraints : ConstraintSet

    Returns
    -------
    ndarray of shape (d,), or None
    """
    if constraints.orderings is None:
        return None
    edges = np.unique(constraints.orderings, axis=0)
    if not _constant_bounds(edges, lower, upper):
        return None
    chains = _chains(edges, point.shape[0])
    x = point.copy()
    if chains is not None:
        for chain in chains:
            x[chain] = isotonic_regression(point[chain]).x
    else:
        vertices, local = np.unique(edges, return_inverse=True)
        local = local.reshape(edges.shape)
        ordered = _certified_order(point[vertices], local[:, 0], local[:, 1])
        if ordered is None:
            return None
        x[vertices] = ordered
    return np.clip(x, lower, upper)


def _constant_bounds(edges: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> bool:
    """Whether ``lower`` and ``upper`` are constant on every connected piece of the edges."""
    d = lower.shape[0]
    graph = sp.csr_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])), shape=(d, d))
    _, piece = connected_components(graph, directed=False)
    on_edge = edges.ravel()
    for bound in (lower, upper):
        first = np.full(d, np.nan)
        first[piece[on_edge]] = bound[on_edge]           # any member stands for its piece
        if np.any(first[piece[on_edge]] != bound[on_edge]):
            return False
    return True


def _chains(edges: np.ndarray, d: int) -> list[np.ndarray] | None:
    """Split the ordering graph into chains, each listed smallest-first, or None.

    None if a vertex has in- or out-degree above one or the graph has a cycle. Chains are found
    by pointer jumping (list ranking) on the successor array in O(d log d) vectorised work.
    """
    out_deg, in_deg = (np.bincount(edges[:, k], minlength=d) for k in (0, 1))
    if out_deg.max() > 1 or in_deg.max() > 1:
        return None
    jump = np.arange(d)
    jump[edges[:, 0]] = edges[:, 1]
    rank = (out_deg > 0).astype(np.int64)          # steps from each vertex to its chain's end
    for _ in range(int(np.ceil(np.log2(d))) + 1):
        if not out_deg[jump].any():                 # every vertex reached its chain's end
            break
        rank, jump = rank + rank[jump], jump[jump]
    if out_deg[jump].any():
        return None                                 # a cycle never reaches an end vertex
    on_chain = np.flatnonzero(out_deg + in_deg > 0)
    order = on_chain[np.lexsort((-rank[on_chain], jump[on_chain]))]
    breaks = np.flatnonzero(np.diff(jump[order])) + 1
    return np.split(order, breaks)


def _certified_order(y: np.ndarray, tails: np.ndarray, heads: np.ndarray) -> np.ndarray | None:
    """Isotonic regression of y (n,) on edges ``x[tails] <= x[heads]`` (k,), if certified.

    Checks the KKT conditions of the kernel's multipliers within ``POLISH_TOL``: stationarity
    ``y - x = sum_out lambda - sum_in lambda``, ``lambda >= 0``, and ``x[tails] <= x[heads]``
    (complementarity holds by construction: multipliers are zero between blocks).
    """
    x, multipliers = isotonic_on_order(y, tails.astype(np.int64), heads.astype(np.int64))
    n, tol = y.shape[0], POLISH_TOL * max(1.0, float(np.max(np.abs(y), initial=0.0)))
    net = np.bincount(tails, multipliers, minlength=n) - np.bincount(heads, multipliers,
                                                                     minlength=n)
    certified = (np.max(np.abs(y - x - net), initial=0.0) <= tol
                 and np.min(multipliers, initial=0.0) >= -tol
                 and np.max(x[tails] - x[heads], initial=0.0) <= tol)
    return x if certified else None


def _solve_qp(point: np.ndarray, constraints: ConstraintSet, lower: np.ndarray,
              upper: np.ndarray) -> tuple[np.ndarray, str]:
    """Solve the projection QP with Clarabel, then polish; return (solution (d,), status).

    The conic form is ``min 1/2 x'Ix - point'x`` s.t. ``G x + s = h``, ``s >= 0`` with
    ``G = [A; I_U; -I_L]`` (shape (m + |U| + |L|, d), sparse; U and L index the finite upper
    and lower bounds). The final clip makes the box part exact.
    """
    d = point.shape[0]
    up, lo = np.flatnonzero(np.isfinite(upper)), np.flatnonzero(np.isfinite(lower))
    eye = sp.identity(d, format="csr")
    g = sp.vstack([constraints.matrix, eye[up], -eye[lo]], format="csr")
    h = np.concatenate([constraints.rhs, upper[up], -lower[lo]]).astype(np.float64)
    gc = g.tocsc()
    gc.sort_indices()
    result = clarabel.DefaultSolver(sp.identity(d, format="csc"), -point, gc, h,
                                    [clarabel.NonnegativeConeT(g.shape[0])], _settings()).solve()
    if result.status in _INFEASIBLE:
        return np.clip(point, lower, upper), "infeasible"
    x, s, z = (np.asarray(v, dtype=np.float64) for v in (result.x, result.s, result.z))
    if x.shape != (d,) or not all(np.all(np.isfinite(v)) for v in (x, s, z)):
        return np.clip(point, lower, upper), "inaccurate"
    polished = _polish(point, g, h, x, z, s)
    if polished is not None:
        return np.clip(polished, lower, upper), "optimal"
    solved = result.status == clarabel.SolverStatus.Solved
    return np.clip(x, lower, upper), "optimal" if solved else "inaccurate"


def _polish(point: np.ndarray, g: sp.csr_matrix, h: np.ndarray, x: np.ndarray, z: np.ndarray,
            s: np.ndarray) -> np.ndarray | None:
    """Active-set polish (as in OSQP) of an interior-point solution; None unless certified.

    On degenerate problems (ties: constraints active with zero multiplier, the norm for
    orderings) an interior-point x is only within ~sqrt(tolerance) of x*. Starting from the
    guess S = {z > s}, solve the equality-constrained projection on S (:func:`_kkt_solve`),
    drop rows of S whose multiplier is negative, add rows that are violated, and repeat (a
    primal-dual active-set method, at most ``POLISH_ROUNDS`` times). The result is kept only
    when the KKT conditions hold within ``POLISH_TOL``: residuals, ``G x <= h``, ``y >= 0``.
    Such an x is the exact projection of a point within O(tol) of ``point``, hence (as
    projections are nonexpansive) within O(tol) of x*.

    Parameters
    ----------
    point, x : ndarray, shape (d,)
        Point to project and Clarabel's solution.
    g : scipy.sparse.csr_matrix, shape (k, d)
    h, z, s : ndarray, shape (k,)
        ``G x <= h``, Clarabel's (nonnegative) duals and slacks.
    """
    tol, active, y = POLISH_TOL * _scale(point, h), z > s, z
    for _ in range(POLISH_ROUNDS):
        rows = np.flatnonzero(active)
        x, y_rows = _kkt_solve(point, g[rows], h[rows], x, y[rows], tol)
        if x is None:
            return None
        y = np.zeros_like(z)
        y[rows] = y_rows
        negative, violated = y < -tol, g @ x - h > tol
        if not negative.any() and not violated.any():
            return x
        active = (active & ~negative) | violated
    return None


def _kkt_solve(point: np.ndarray, ga: sp.csr_matrix, ha: np.ndarray, x: np.ndarray,
               y: np.ndarray, tol: float) -> tuple[np.ndarray | None, np.ndarray]:
    """Solve ``x + G_S' y = point``, ``G_S x = h_S`` to within ``tol``; x is None on failure.

    LU of the KKT matrix regularised by ``-1e-9 I`` plus iterative refinement, started from
    (x, y) so that, when G_S is rank deficient (y not unique), y stays near the start.

    Parameters
    ----------
    point, x : ndarray, shape (d,)
    ga : scipy.sparse.csr_matrix, shape (r, d)
    ha, y : ndarray, shape (r,)
    """
    d, r = point.shape[0], ga.shape[0]
    kkt = sp.bmat([[sp.identity(d), ga.T], [ga, sp.csr_matrix((r, r))]], format="csc")
    rhs, sol = np.concatenate([point, ha]), np.concatenate([x, y])
    try:
        lu = splu(kkt - sp.diags(np.r_[np.zeros(d), np.full(r, 1e-9)], format="csc"))
    except RuntimeError:
        return None, y
    for _ in range(10):
        residual = rhs - kkt @ sol
        if np.max(np.abs(residual)) <= 1e-3 * tol:
            break
        sol += lu.solve(residual)
    if np.max(np.abs(rhs - kkt @ sol)) > tol:
        return None, y
    return sol[:d], sol[d:]


def _scale(point: np.ndarray, rhs: np.ndarray) -> float:
    """max(1, |point|_inf, |rhs|_inf): the unit of the absolute tolerances."""
    return max(1.0, float(np.max(np.abs(point), initial=0.0)),
               float(np.max(np.abs(rhs), initial=0.0)))


def _settings() -> clarabel.DefaultSettings:
    """Quiet Clarabel settings with tolerances ``CLARABEL_TOL`` (default cap of 200 iterations)."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = CLARABEL_TOL
    settings.tol_ktratio = 1e-8
    return settings
