"""Shrinking: the best distribution over T candidates, supported on at most m+1 of them.

Cotter, Jiang, Sridharan, "Two-Player Games for Efficient Non-Convex Constrained
Optimization" (ALT 2019, arXiv:1804.06500), Lemma 3 (§3.1) and §5: every vertex of
``{p in simplex : <p, g_i> <= eps for all i}`` has at most ``m* + 1 <= m + 1`` nonzeros, where
``m*`` counts the active constraints, so a vertex solution of the LP is a small mixture that is
no worse than the uniform average of the iterates (§5's second phase). Like TFCO's
``find_best_candidate_distribution`` we take eps as small as achievable; TFCO finds it by
bisection over LP feasibility, here one LP (LP1 below) gives it exactly.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from worker.errors import SolverError

#: LP2 may exceed the optimal expected max violation by this much, relative to max |v| over
#: the kept columns. It absorbs round-off in z*; the objective is optimal for the relaxed bound.
RELATIVE_TOLERANCE = 1e-9
#: Weights below this are dropped from the returned mixture before renormalizing.
WEIGHT_FLOOR = 1e-12
#: HiGHS's default 1e-7 tolerances let near-degenerate LPs break sum(p) == 1 by ~1e-7 and gain
#: far more than that in objective. (Data is also rescaled to [-1, 1], since HiGHS drops matrix
#: entries below its small_matrix_value 1e-9 as zeros.)
_HIGHS = {"presolve": True, "primal_feasibility_tolerance": 1e-10,
          "dual_feasibility_tolerance": 1e-10}


def _check(name: str, array: np.ndarray, ndim: int) -> np.ndarray:
    a = np.asarray(array)
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if a.size and not (np.isfinite(a.max()) and np.isfinite(a.min())):  # no bool copy if fine
        bad = tuple(int(k) for k in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{name}[{', '.join(map(str, bad))}] is {a[bad]}")
    return a


def _solve(c, a_ub, b_ub, a_eq, bounds, which: str) -> np.ndarray:
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=bounds,
                  method="highs-ds", options=_HIGHS)
    if res.status != 0:
        raise SolverError(f"shrinking {which} failed (HiGHS status {res.status}): {res.message}")
    return res.x


def _candidates(objectives: np.ndarray, violations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Checked (f (T,), v (T, m)): finite, T >= 1, one row of violations per objective."""
    f = _check("objectives", objectives, 1).astype(np.float64)
    v = _check("violations", violations, 2)
    if f.shape[0] == 0:
        raise ValueError("objectives must hold at least one candidate, got T = 0")
    if v.shape[0] != f.shape[0]:
        raise ValueError(f"violations must have T = {f.shape[0]} rows (one per objective), "
                         f"got shape {v.shape}")
    return f, v


def best_mixture(objectives: np.ndarray, violations: np.ndarray) -> np.ndarray:
    """Lowest-objective distribution among those with the least expected max violation.

    Solves LP1 ``min z s.t. sum_c p_c v[c, i] <= z (all i), z >= 0, p in simplex``, then LP2
    ``min sum_c p_c f_c s.t. sum_c p_c v[c, i] <= z* + tol, p in simplex`` with HiGHS dual
    simplex, whose basic (vertex) answer has at most k + 1 nonzeros (Lemma 3 of Cotter et al.),
    k = number of columns some candidate violates. Never-violated columns cannot bind against
    ``z >= 0`` and are dropped first, so huge m with few violated columns stays cheap.
    ``tol = RELATIVE_TOLERANCE * max |v[:, kept]|``. Deterministic.

    Parameters
    ----------
    objectives : ndarray, shape (T,)
        f_c, the objective value of candidate c (T >= 1).
    violations : ndarray, shape (T, m)
        ``violations[c, i] = g_i(candidate c)``; positive means violated. m may be 0.

    Returns
    -------
    weights : ndarray, shape (T,)
        Nonnegative, summing to 1, at most ``k + 1 <= m + 1`` nonzeros. If no candidate
        violates anything, all weight is on the lowest objective (ties: lowest index).

    Raises
    ------
    ValueError
        Bad shapes, T == 0, or a NaN/inf entry (the message names the index).
    SolverError
        HiGHS failed on an LP that is always feasible and bounded.

    Examples
    --------
    >>> w = best_mixture(np.array([0.0, 1.0]), np.array([[1.0], [-1.0]]))
    >>> w.round(6).tolist(), round(expected_violation(w, np.array([[1.0], [-1.0]])), 6)
    ([0.5, 0.5], 0.0)
    """
    f, v = _candidates(objectives, violations)
    t = f.shape[0]
    g = _violated(v)
    weights = np.zeros(t)
    if g.shape[0] == 0 or t == 1:
        weights[np.argmin(f)] = 1.0
        return weights
    z_star = _least_violation(g)
    p = _solve(_unit_range(f), sp.csr_array(g), np.full(g.shape[0], z_star + RELATIVE_TOLERANCE),
               sp.csr_array(np.ones((1, t))), [(0, None)] * t, "LP2 (best objective)")
    return _distribution(p)


def best_robust_mixture(losses: np.ndarray, violations: np.ndarray) -> np.ndarray:
    """The distribution minimizing max_k sum_c p_c L[c, k] among those with the least
    expected max violation: shrinking for a robust objective (Cotter et al. 2019, §2 and
    §6.1: Equation 3's slack xi is the LP's variable y).

    LP1 as :func:`best_mixture`; then ``min y s.t. sum_c p_c L[c, k] <= y (all k),
    sum_c p_c v[c, i] <= z* + tol, p in simplex``, whose vertex answer has at most
    q + k + 1 nonzeros (q terms, k violated columns).

    Parameters
    ----------
    losses : ndarray, shape (T, q)
        L_k(candidate c), q >= 1.
    violations : ndarray, shape (T, m)

    Returns
    -------
    weights : ndarray, shape (T,)
    """
    loss, v = _candidates(np.asarray(losses)[:, 0], violations)
    table = _check("losses", losses, 2).astype(np.float64)
    t, q = table.shape
    g = _violated(v)
    k = g.shape[0]
    bound = np.zeros(0) if k == 0 else np.full(k, _least_violation(g) + RELATIVE_TOLERANCE)
    rows = sp.vstack([sp.hstack([sp.csr_array(_unit_range(table).T),
                                 sp.csr_array(-np.ones((q, 1)))]),
                      sp.hstack([sp.csr_array(g), sp.csr_array((k, 1))])], format="csr")
    x = _solve(np.append(np.zeros(t), 1.0), rows, np.concatenate([np.zeros(q), bound]),
               sp.csr_array(np.append(np.ones(t), 0.0)[None, :]),
               [(0, None)] * t + [(None, None)], "LP2 (best worst term)")
    return _distribution(x[:t])


def _violated(v: np.ndarray) -> np.ndarray:
    """The columns some candidate violates, transposed and scaled to [-1, 1]: (k, T)."""
    keep = np.flatnonzero(v.max(axis=0) > 0) if v.shape[1] else np.empty(0, np.intp)
    g = np.asarray(v[:, keep], dtype=np.float64).T
    return g / float(np.abs(g).max()) if keep.size else g  # the answer is scale invariant


def _unit_range(values: np.ndarray) -> np.ndarray:
    """``values`` shifted and scaled into [0, 1] together (the LPs' argmin is unchanged)."""
    spread = float(values.max() - values.min())
    return (values - values.min()) / spread if spread > 0 else np.zeros(values.shape)


def _least_violation(g: np.ndarray) -> float:
    """LP1's z* = min over the simplex of max(0, max_i (g p)_i), as achieved (g: (k, T))."""
    k, t = g.shape
    a_ub = sp.hstack([sp.csr_array(g), sp.csr_array(-np.ones((k, 1)))], format="csr")
    a_eq = sp.csr_array(np.append(np.ones(t), 0.0)[None, :])
    x = _solve(np.append(np.zeros(t), 1.0), a_ub, np.zeros(k), a_eq,
               [(0, None)] * (t + 1), "LP1 (least violation)")
    p1 = np.clip(x[:t], 0.0, None)
    return max(0.0, float((g @ (p1 / p1.sum())).max()))  # achieved, so LP2 stays feasible


def _distribution(p: np.ndarray) -> np.ndarray:
    """An LP's weights with those below :data:`WEIGHT_FLOOR` dropped, renormalized."""
    p = np.where(p >= WEIGHT_FLOOR, p, 0.0)
    return p / p.sum()


def least_violation(violations: np.ndarray) -> float:
    """The least expected max violation any mixture of the candidates reaches (LP1 of
    :func:`best_mixture`, as achieved by its answer; what the shrunk mixture's violation
    is at most, up to LP2's ``RELATIVE_TOLERANCE``).

    Parameters
    ----------
    violations : ndarray, shape (T, m)

    Returns
    -------
    float
        0.0 when some mixture satisfies every constraint in expectation.

    Examples
    --------
    >>> least_violation(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    0.0
    """
    _, v = _candidates(np.zeros(np.shape(violations)[0]), violations)
    g = _violated(v)
    if g.shape[0] == 0:
        return 0.0
    return _least_violation(g) * float(np.abs(v[:, v.max(axis=0) > 0]).max())


def expected_violation(weights: np.ndarray, violations: np.ndarray) -> float:
    """Expected max violation ``max(0, max_i sum_c w_c v[c, i])`` of a mixture.

    Parameters
    ----------
    weights : ndarray, shape (T,)
        Nonnegative (e.g. from :func:`best_mixture`).
    violations : ndarray, shape (T, m)

    Returns
    -------
    float
        0.0 when m == 0 or the mixture satisfies every constraint in expectation.
    """
    v = np.asarray(violations)
    if v.shape[1] == 0:
        return 0.0
    hit = v[:, v.max(axis=0) > 0]  # other columns give <= 0 for nonnegative weights
    return max(0.0, float((np.asarray(weights, dtype=np.float64) @ hit).max(initial=0.0)))
