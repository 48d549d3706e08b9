"""``validation: {"fraction": f, "seed": s}``: the objective's rows split into training and
held-out rows before anything is compiled.

:class:`SplitSource` is the :class:`~worker.problem.compile.DataSource` the pipeline reads a
spec through: whatever it reads under ``objective.data`` (features, labels, groups, weights) comes
back restricted to the training rows, and it keeps the held-out rows for the report. The
permutation is numpy's PCG64 seeded with ``s``; the first round(f n) rows of it are held out
(at least one row stays on each side).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from worker.errors import SpecError
from worker.problem.compile import DataSource
from worker.settings import DataSettings

#: The spec paths whose rows are split.
OBJECTIVE_DATA = "objective.data"


def held_out_rows(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, held-out rows), each sorted, of n rows."""
    if n < 2:
        raise SpecError.at("validation.fraction", f"the objective has {n} row(s); holding "
                           "out a share needs at least 2")
    held = min(max(int(round(fraction * n)), 1), n - 1)
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[held:]), np.sort(order[:held])


class SplitSource(DataSource):
    """Reads ``objective.data`` restricted to the training rows; the rest is held out.

    Attributes
    ----------
    held_out : dict of str to ndarray
        What was read under ``objective.data``, on the held-out rows: ``"features"``,
        ``"labels"``, ``"groups.<name>"`` and ``"weights"``.
    """

    def __init__(self, roots: Sequence[Path], fraction: float, seed: int,
                 settings: DataSettings):
        super().__init__(roots, settings)
        self.fraction, self.seed = fraction, seed
        self.rows: tuple[np.ndarray, np.ndarray] | None = None
        self.held_out: dict[str, object] = {}

    def _split(self, value, key: str):
        """``value``'s training rows; its held-out rows kept under ``key``."""
        if self.rows is None:
            self.rows = held_out_rows(value.shape[0], self.fraction, self.seed)
        training, held = self.rows
        if value.shape[0] != training.size + held.size:
            return value  # a length mismatch: the compiler names it on the full data
        self.held_out[key] = value[held]
        return value[training]

    def examples(self, features, labels, path: str):
        """Features and labels; split when ``path`` is ``objective.data``."""
        features, labels = super().examples(features, labels, path)
        if path != OBJECTIVE_DATA:
            return features, labels
        return self._split(features, "features"), self._split(labels, "labels")

    def vector(self, value, path: str, allow_infinite: bool = False) -> np.ndarray:
        """A vector; a group of ``objective.data.groups`` and the weights are split."""
        vector = super().vector(value, path, allow_infinite)
        prefix = f"{OBJECTIVE_DATA}.groups."
        if self.rows is None:
            return vector
        if path == f"{OBJECTIVE_DATA}.weights":
            return self._split(vector, "weights")
        if not path.startswith(prefix):
            return vector
        return self._split(vector, f"groups.{path.removeprefix(prefix)}")
