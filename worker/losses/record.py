"""What a loss is made of: :class:`Loss`, one record per loss in :data:`worker.losses.LOSSES`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from worker.losses.label_rules import LabelRule


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
    labels : LabelRule
        Which labels the loss takes and how the kernels receive them:
        :data:`~worker.losses.label_rules.CLASSES` or
        :data:`~worker.losses.label_rules.TARGETS`.
    value, slope : numba dispatchers
        ``l(s, y)`` and a subgradient ``dl/ds``, on scalars, compiled.
    reference_value, reference_slope : callable
        The same in plain numpy on arrays of shape (n,): the tests' reference.
    """

    name: str
    code: int
    formula: str
    labels: LabelRule
    value: Callable
    slope: Callable
    reference_value: Callable[[np.ndarray, np.ndarray], np.ndarray]
    reference_slope: Callable[[np.ndarray, np.ndarray], np.ndarray]
