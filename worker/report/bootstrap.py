"""Percentile bootstrap intervals of rates (Efron & Tibshirani 1993, §13.3).

A rate is the mean of a per-row value v_i (an expected indicator in [0, 1]) over a subset S
of n rows. One resample draws n rows uniformly with replacement, i.e. counts c (n,) summing
to n; its rate is sum_{i in S} c_i v_i / sum_{i in S} c_i. Every rate of one data set is computed on
the same resamples (rows are resampled, not each rate on its own), and a resample that draws
no row of S is left out of that rate's percentiles.
"""

from __future__ import annotations

import numpy as np

#: Resamples per interval: the percentiles at 2.5% and 97.5% then move by about
#: 0.1 standard errors from one seed to another.
RESAMPLES = 1000
#: Coverage of the intervals.
LEVEL = 0.95
#: Resamples drawn at once, at most; fewer for large n, so that one chunk holds at most
#: CHUNK_COUNTS counts (64 MiB of float64).
CHUNK = 100
CHUNK_COUNTS = 2**23


def rate_intervals(subsets: list[np.ndarray], values: list[np.ndarray], *,
                   resamples: int = RESAMPLES, level: float = LEVEL,
                   seed: int = 0) -> list[tuple[float, float] | None]:
    """Percentile intervals of the rates mean(values[r][subsets[r]]).

    Parameters
    ----------
    subsets : list of ndarray of bool, each shape (n,)
    values : list of ndarray, each shape (n,)
    resamples, level, seed : int, float, int
        B resamples of the n rows (numpy's PCG64 seeded with ``seed``), the coverage.

    Returns
    -------
    list of (low, high), or None for a rate with an empty subset.
    """
    if not subsets:
        return []
    n = subsets[0].size
    rng = np.random.default_rng(seed)
    masks = np.array(subsets, dtype=np.float64)                 # (R, n)
    weighted = masks * np.array(values, dtype=np.float64)       # (R, n)
    totals, sizes = [], []
    chunk = max(1, min(CHUNK, CHUNK_COUNTS // n))
    for start in range(0, resamples, chunk):
        counts = _counts(rng, n, min(chunk, resamples - start))
        totals.append(counts @ weighted.T)                       # (B_chunk, R)
        sizes.append(counts @ masks.T)
    total, size = np.vstack(totals), np.vstack(sizes)
    tail = 50.0 * (1.0 - level)
    intervals: list[tuple[float, float] | None] = []
    for r in range(len(subsets)):
        drawn = size[:, r] > 0
        if not subsets[r].any():
            intervals.append(None)
            continue
        rates = total[drawn, r] / size[drawn, r]
        low, high = np.percentile(rates, [tail, 100.0 - tail])
        intervals.append((float(low), float(high)))
    return intervals



def _counts(rng: np.random.Generator, n: int, draws: int) -> np.ndarray:
    """How often each of n rows is drawn in each of ``draws`` resamples: (draws, n), each row
    summing to n (n uniform draws with replacement)."""
    rows = rng.integers(0, n, size=(draws, n)) + (np.arange(draws) * n)[:, None]
    return np.bincount(rows.ravel(), minlength=draws * n).reshape(draws, n).astype(np.float64)
