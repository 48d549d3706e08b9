"""Which labels a loss takes: :data:`CLASSES` (+1/-1, or 1/0 with 0 meaning -1) or
:data:`TARGETS` (any real number), each a :class:`LabelRule`.

Finiteness is checked for every rule by :mod:`worker.data.labels`, which also names the
first refused row; a rule only says which finite labels it accepts and how the kernels
receive them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LabelRule:
    """The labels of a loss.

    Attributes
    ----------
    name : str
        ``"classes"`` or ``"targets"``.
    noun : str
        One accepted label in an error message (``"a class label"``).
    sentence : str
        What users are told to give (``"+1/-1 (or 1/0, 0 meaning -1)"``).
    accepts : callable
        Finite labels, shape (n,) -> bool mask of the accepted ones, shape (n,).
    signed : callable
        Accepted labels, shape (n,) -> the float64 labels the kernels take, shape (n,).
    """

    name: str
    noun: str
    sentence: str
    accepts: Callable[[np.ndarray], np.ndarray]
    signed: Callable[[np.ndarray], np.ndarray]


def _is_class_label(labels: np.ndarray) -> np.ndarray:
    """+1, -1 or 0, elementwise."""
    return np.isin(labels, (-1.0, 0.0, 1.0))


def _zero_as_minus_one(labels: np.ndarray) -> np.ndarray:
    """Class labels with 0 read as -1."""
    return np.where(labels == 0, -1.0, labels)


def _any_label(labels: np.ndarray) -> np.ndarray:
    """Every finite label is a target."""
    return np.ones(labels.shape, dtype=bool)


def _unchanged(labels: np.ndarray) -> np.ndarray:
    """Targets reach the kernels as given."""
    return labels


#: Class labels: +1/-1, or 1/0 with 0 meaning -1.
CLASSES = LabelRule("classes", "a class label", "+1/-1 (or 1/0, 0 meaning -1)",
                    _is_class_label, _zero_as_minus_one)
#: Real-valued targets.
TARGETS = LabelRule("targets", "a real target", "any real number", _any_label, _unchanged)
