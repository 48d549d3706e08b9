"""Example weights: read and checked at their JSON path, and put on the objective's scale.

A weighted objective is ``sum_i c_i loss_i / sum_i c_i`` for non-negative weights c (n,) of
positive sum. The compiled :class:`~worker.problem.compiled.Objective` holds them divided by
their mean (:func:`mean_one`), so that every consumer computes
``(1/n) sum_i c_i loss_i`` with the same ``1/n`` as the unweighted mean: the weights' scale
never matters, and weights all equal give the unweighted objective exactly.
"""

from __future__ import annotations

import numpy as np

from worker.errors import SpecError


def example_weights(value, n: int, path: str, source) -> np.ndarray | None:
    """Non-negative finite example weights (n,) of positive sum, read from ``value`` (None:
    none given); a SpecError at ``path`` (or ``path[i]``) saying what to fix otherwise.

    Parameters
    ----------
    value : inline vector, data reference or None
    n : int
        Examples the weights belong to.
    path : str
        The JSON path of ``value``, e.g. ``objective.data.weights``.
    source : DataSource
        Reads ``value`` (:class:`worker.problem.compile.DataSource`).

    Returns
    -------
    ndarray, shape (n,), or None
    """
    if value is None:
        return None
    weights = np.asarray(source.vector(value, path), dtype=np.float64)
    return checked_weights(weights, n, path)


def checked_weights(weights: np.ndarray, n: int, path: str) -> np.ndarray:
    """``weights`` (n,) when every one is finite and >= 0 and their sum is > 0; a SpecError
    naming ``path`` (or its first bad entry ``path[i]``) and what to fix otherwise."""
    if weights.ndim != 1 or weights.shape[0] != n:
        raise SpecError.at(path, f"length {weights.shape[0] if weights.ndim else 0}; give "
                           f"one weight per example ({n})")
    bad = np.flatnonzero(~np.isfinite(weights) | (weights < 0))
    if bad.size:
        raise SpecError.at(f"{path}[{int(bad[0])}]", f"{float(weights[bad[0]])!r} is not a "
                           "weight; give a finite number >= 0 (0 leaves the example out)")
    if not weights.sum() > 0:
        raise SpecError.at(path, "every weight is 0; give at least one positive weight")
    return weights


def mean_one(weights: np.ndarray | None) -> np.ndarray | None:
    """``weights`` (n,) divided by their mean, so that they sum to n (None stays None)."""
    if weights is None:
        return None
    scaled = weights / weights.max()       # subnormal weights' sum would overflow n / sum
    return scaled * (weights.shape[0] / scaled.sum())


def draw_arrays(weights: np.ndarray | None) -> dict[str, np.ndarray]:
    """The kernels' ``x_weights``, the example weights c (n,) of mean 1, and
    ``x_cumulative``, their running sums up to the last positive one, which
    :func:`~worker.kernels.objective.sample_example` draws from; both empty without
    weights."""
    if weights is None:
        return {"x_weights": np.zeros(0), "x_cumulative": np.zeros(0)}
    last = int(np.flatnonzero(weights > 0)[-1])
    return {"x_weights": np.ascontiguousarray(weights, dtype=np.float64),
            "x_cumulative": np.cumsum(weights[:last + 1], dtype=np.float64)}
