"""The fixed calibrators of a calibrated model's inputs (docs/tables.md).

A numeric column has a piecewise-linear calibrator over increasing keypoints (given, or K
quantiles of the training column, its minimum and maximum included): a value is the
combination ``(1 - t) e_i + t e_(i+1)`` of its segment's two keypoints, constant beyond the
first and the last (:func:`worker.kernels.calibration.pwl_segments`). A categorical column
has one indicator per category. The calibrators are fitted once from the training table and
then fixed, so the model stays linear in its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from worker.errors import DataError
from worker.kernels.calibration import pwl_segments
from worker.spec.tables import TableFeature
from worker.tables.columns import Table


@dataclass(frozen=True)
class NumericCalibrator:
    """A piecewise-linear calibrator: ``keypoints`` (K,) strictly increasing, K >= 2."""

    column: str
    keypoints: np.ndarray
    monotonic: str = "none"
    convexity: str = "none"

    @property
    def size(self) -> int:
        """K, the outputs (parameters, or lattice coordinates) of the calibrator."""
        return int(self.keypoints.shape[0])

    def segments(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """Each row's segment ``i`` (int64 (n,), 0..K-2) and position ``t`` (float64 (n,))."""
        values = table.numbers(self.column)
        segment = np.empty(values.shape[0], dtype=np.int64)
        position = np.empty(values.shape[0], dtype=np.float64)
        pwl_segments(values, self.keypoints, segment, position)
        return segment, position

    def chain(self) -> list[int]:
        """Calibrator outputs (0..K-1) from lowest to highest under ``monotonic``."""
        outputs = list(range(self.size))
        return outputs[::-1] if self.monotonic == "decreasing" else outputs

    def curvature_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows ``r . theta <= 0`` (COO: row, output, value; K - 2 rows) saying the slopes
        between consecutive keypoints rise (convex) or fall (concave): for each inner
        keypoint k, ``(theta_k - theta_(k-1)) / h_(k-1) - (theta_(k+1) - theta_k) / h_k``."""
        inverse = 1.0 / np.diff(self.keypoints)
        rows = np.repeat(np.arange(self.size - 2), 3)
        outputs = (np.arange(self.size - 2)[:, None] + np.arange(3)).ravel()
        values = np.column_stack([-inverse[:-1], inverse[:-1] + inverse[1:], -inverse[1:]])
        sign = 1.0 if self.convexity == "convex" else -1.0
        return rows, outputs, sign * values.ravel()


@dataclass(frozen=True)
class CategoricalCalibrator:
    """One output per category; ``order`` lists categories from lowest to highest output,
    and ``decreasing`` says the order was declared the other way (highest first)."""

    column: str
    categories: tuple[str, ...]
    order: tuple[str, ...] = ()
    decreasing: bool = False

    @classmethod
    def declared(cls, column: str, categories: tuple[str, ...], order: tuple[str, ...],
                 monotonic: str) -> CategoricalCalibrator:
        """The calibrator of an order as a spec's ``monotonic_order`` (or a Result's
        ``order``) declares it: outputs rise along ``order``, or fall along it when
        ``monotonic`` is ``"decreasing"``."""
        decreasing = monotonic == "decreasing" and bool(order)
        return cls(column, categories, order[::-1] if decreasing else order, decreasing)

    @property
    def monotonic(self) -> str:
        """The direction of the outputs along :attr:`declared_order`: ``"increasing"`` or
        ``"decreasing"``, ``"none"`` without an order."""
        return "none" if not self.order else "decreasing" if self.decreasing else "increasing"

    @property
    def declared_order(self) -> tuple[str, ...]:
        """``order`` as declared: highest first when :attr:`decreasing`."""
        return self.order[::-1] if self.decreasing else self.order

    @property
    def size(self) -> int:
        """The number of categories."""
        return len(self.categories)

    def codes(self, table: Table) -> np.ndarray:
        """Each row's category index, int64 (n,)."""
        return table.codes(self.column, self.categories)

    def chain(self) -> list[int]:
        """The outputs of ``order`` (lowest first); empty when unordered."""
        return [self.categories.index(category) for category in self.order]

    def ranks(self) -> np.ndarray:
        """Each category's place, int64 (C,): its position in ``order`` (which lists
        every category), or without an order its position among ``categories``."""
        ranks = np.arange(self.size, dtype=np.int64)
        if self.order:
            ranks[self.chain()] = np.arange(len(self.order))
        return ranks


Calibrator = NumericCalibrator | CategoricalCalibrator


def fit_calibrator(feature: TableFeature, tables: list[Table], default_keypoints: int,
                   path: str) -> Calibrator:
    """The fixed calibrator of ``feature`` from the training tables (their rows pooled).

    ``default_keypoints`` is K when the feature gives none; ``path`` names the feature
    (``model.features[j]``) in messages.
    """
    if feature.categorical:
        return _fit_categorical(feature, tables, path)
    keypoints = feature.keypoints if feature.keypoints is not None else default_keypoints
    if isinstance(keypoints, list):
        knots = np.array(keypoints, dtype=np.float64)
    else:
        values = np.concatenate([table.numbers(feature.column) for table in tables])
        knots = np.unique(np.quantile(values, np.linspace(0.0, 1.0, keypoints)))
        if knots.size < 2:
            raise DataError(path, f"column {feature.column!r} holds the single value "
                                  f"{knots[0]} on its {values.size:,} rows; a calibrator "
                                  "needs two keypoints: drop the feature or list keypoints")
    return NumericCalibrator(feature.column, knots, feature.monotonic, feature.convexity)


def _fit_categorical(feature: TableFeature, tables: list[Table],
                     path: str) -> CategoricalCalibrator:
    if feature.categories == "auto":
        seen = pa.chunked_array([table.text(feature.column) for table in tables])
        categories = tuple(sorted(pc.unique(seen).to_pylist()))
    else:
        categories = tuple(str(category) for category in feature.categories)
    order = tuple(str(category) for category in feature.monotonic_order or ())
    for category in order:
        if category not in categories:
            raise DataError(path, f"monotonic_order names {category!r}, which column "
                                  f"{feature.column!r} never holds in training")
    return CategoricalCalibrator.declared(feature.column, categories, order, feature.monotonic)
