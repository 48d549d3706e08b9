"""The "best single model" of a set of candidates (Cotter, Jiang, Sridharan 2019, §6.2).

For users who cannot deploy a stochastic classifier: rank the candidates by objective and by
the magnitude of each constraint violation max(0, g_i); a candidate's score is its worst
(largest) rank; the lowest score wins, the objective breaking ties. Equal values share the
best rank, so every candidate satisfying constraint i ranks first on it.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def best_single(objectives: np.ndarray, violations: np.ndarray) -> int:
    """Index of the best single candidate by the §6.2 heuristic.

    Parameters
    ----------
    objectives : ndarray, shape (T,)
    violations : ndarray, shape (T, m)
        g_i of each candidate (positive: violated); m may be 0.

    Returns
    -------
    int
        The chosen candidate (ties: lowest objective, then lowest index).
    """
    columns = np.column_stack([objectives, np.maximum(violations, 0.0)])
    score = rankdata(columns, method="min", axis=0).max(axis=1)
    return int(np.lexsort((np.arange(score.size), objectives, score))[0])
