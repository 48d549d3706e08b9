"""What a loss is made of: :class:`Loss`, one record per loss in :data:`worker.losses.LOSSES`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Label kinds: class labels +1/-1 (1/0 accepted, 0 meaning -1), or any real target.
CLASSES = "classes"
TARGETS = "targets"


@dataclass(frozen=True)
class Loss:
    """One loss l(s, y) of a score s = x.w and a label y.

    Attributes
    ----------
    name : str
        The spec's ``objective.loss``.
    code : int
        The integer the kernels switch on (:func:`worker.kernels.objective.loss_value`).
    formula : str
        The loss in words, for documentation and errors.
    labels : str
        :data:`CLASSES` or :data:`TARGETS`: which labels the loss takes.
    value, slope : numba dispatchers
        ``l(s, y)`` and a subgradient ``dl/ds``, on scalars, compiled.
    reference_value, reference_slope : callable
        The same in plain numpy on arrays of shape (n,): the tests' reference.
    """

    name: str
    code: int
    formula: str
    labels: str
    value: Callable
    slope: Callable
    reference_value: Callable[[np.ndarray, np.ndarray], np.ndarray]
    reference_slope: Callable[[np.ndarray, np.ndarray], np.ndarray]
