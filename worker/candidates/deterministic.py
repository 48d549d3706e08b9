"""The deterministic model: one candidate to deploy where a randomized classifier is not
acceptable (Cotter, Jiang, Sridharan 2019, §5 "Evaluation").

The rule: among the candidates whose largest constraint violation is within ``tolerance``,
the one of least objective; when none is, the one of least violation (ties: least
objective, then lowest index). Unlike the §6.2 rank heuristic
(:mod:`worker.candidates.best_single`, TFCO's ``find_best_candidate_index`` with ranked
objectives) it never trades feasibility for objective: on TFCO's example the rank heuristic
picks a candidate violating a constraint by 0.37, this rule the one feasible candidate.

What is lost: the m+1 mixture is the best distribution over the candidates (the shrinking
LP); a single candidate is one vertex of that simplex, so its objective is at best the
mixture's when both are feasible, and no guarantee of §5 holds for it.
"""

from __future__ import annotations

import numpy as np


def best_feasible(objectives: np.ndarray, max_violations: np.ndarray, tolerance: float) -> int:
    """Index of the deterministic model among T candidates.

    Parameters
    ----------
    objectives : ndarray, shape (T,)
    max_violations : ndarray, shape (T,)
        max(0, max_i g_i) of each candidate.
    tolerance : float
        Largest violation counted as feasible (``solver.tolerance``).

    Returns
    -------
    int

    Examples
    --------
    >>> best_feasible(np.array([0.0, 2.0, 1.0]), np.array([0.5, 0.0, 1e-4]), 1e-3)
    2
    >>> best_feasible(np.array([0.0, 2.0]), np.array([0.5, 0.2]), 1e-3)
    1
    """
    order = np.arange(objectives.size)
    feasible = np.flatnonzero(max_violations <= tolerance)
    if feasible.size:
        return int(feasible[np.lexsort((feasible, objectives[feasible]))[0]])
    return int(np.lexsort((order, objectives, max_violations))[0])
