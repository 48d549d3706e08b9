"""The examples of one split of a shipped data set: features and labels by row, and any
other per-row arrays a data set adds (UCI Adult's group indicators)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Self

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Examples:
    """Features (n, d), dense or CSR, and labels (n,); a subclass may add fields holding one
    entry per row: an array, or a dict of arrays (n,)."""

    features: np.ndarray | sp.csr_matrix
    labels: np.ndarray

    def rows(self, index: np.ndarray) -> Self:
        """The examples at ``index`` (positions, in that order), every per-row field taken."""
        return type(self)(**{f.name: _take(getattr(self, f.name), index) for f in fields(self)})

    @classmethod
    def stacked(cls, parts: list[Self]) -> Self:
        """The parts' examples one after the other, in order."""
        return cls(**{f.name: _stack([getattr(part, f.name) for part in parts])
                      for f in fields(cls)})


def _take(value, index: np.ndarray):
    """Rows ``index`` of an array, or of each array of a dict."""
    if isinstance(value, dict):
        return {name: vector[index] for name, vector in value.items()}
    return value[index]


def _stack(values: list):
    """Arrays (or CSR matrices, or dicts of arrays) stacked by row."""
    first = values[0]
    if isinstance(first, dict):
        return {name: np.concatenate([value[name] for value in values]) for name in first}
    if sp.issparse(first):
        return sp.vstack(values, format="csr")
    return np.concatenate(values)
