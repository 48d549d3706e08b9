"""A calibrated model's fixed transform from raw rows to the engine's features, its
constraints, and its description in the Result (:class:`worker.result.CalibratedModel`).

:class:`TableModel` holds what both calibrated models share (the calibrators, their
columns, the Result's features and their restoration); :class:`LinearTable` is
``calibrated_linear``: parameters ``[bias, outputs of feature 0, outputs of feature 1,
...]``; a row's features are 1 for the bias, ``(1 - t, t)`` on its segment's two outputs
for a numeric feature and 1 on its category's output for a categorical one, so the score is
``bias + sum_j c_j(x_j)``. ``calibrated_lattice`` is
:class:`worker.tables.lattice.LatticeTable`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from worker.data.refs import CooMatrix
from worker.result import CalibratedFeature, CalibratedModel
from worker.spec.models import LinearConstraint, OrderingConstraint
from worker.spec.tables import DEFAULT_KEYPOINTS
from worker.tables.calibrators import (
    Calibrator,
    CategoricalCalibrator,
    NumericCalibrator,
    fit_calibrator,
)
from worker.tables.columns import Table


@dataclass(frozen=True)
class TableModel(ABC):
    """The fixed part of a calibrated model: its calibrators (and a lattice's sizes).

    A subclass serves one model type (``kind``) and says how many parameters it has
    (:attr:`d`), how a table's rows become feature rows (:meth:`features`), which constraint
    blocks its features' shapes ask for (:meth:`constraints`) and what the Result states of
    feature j (:meth:`outputs`, :meth:`offset`)."""

    calibrators: tuple[Calibrator, ...]
    sizes: tuple[int, ...] = ()

    #: The ``model.type`` it serves and the parameter layout the Result states.
    kind: ClassVar[str]
    layout: ClassVar[str]

    @classmethod
    @abstractmethod
    def fit(cls, model: Any, tables: list[Table]) -> TableModel:
        """The transform of the spec's calibrated ``model``, fitted on the training
        ``tables`` (their rows pooled)."""

    @property
    def columns(self) -> list[str]:
        """The columns the model reads, in feature order."""
        return [calibrator.column for calibrator in self.calibrators]

    @property
    def categorical(self) -> list[bool]:
        """Which inputs are categorical, in feature order."""
        return [isinstance(calibrator, CategoricalCalibrator)
                for calibrator in self.calibrators]

    @classmethod
    @abstractmethod
    def row_entries(cls, categorical: Sequence[bool]) -> int:
        """Nonzeros one row's features hold at most, for inputs of which ``categorical``
        says which are categorical (known from the spec before any table is read)."""

    @property
    @abstractmethod
    def d(self) -> int:
        """The number of parameters."""

    @abstractmethod
    def features(self, table: Table) -> sp.csr_matrix:
        """The engine's feature rows of a table's rows, CSR (n, d)."""

    @abstractmethod
    def constraints(self) -> list:
        """The spec's constraint blocks the features' shapes ask for."""

    def offset(self, j: int) -> int | None:
        """The first parameter of feature j's outputs, if they are parameters."""
        return None

    @abstractmethod
    def outputs(self, j: int, solution: np.ndarray | None) -> np.ndarray:
        """Feature j's outputs in the Result (one per keypoint or category), under
        ``solution`` (d,) where they are parameters."""

    def describe(self, solution: np.ndarray | None) -> CalibratedModel:
        """The Result's model; ``solution`` (d,) is the deployed one."""
        features = [_feature(calibrator, self.offset(j), self.outputs(j, solution))
                    for j, calibrator in enumerate(self.calibrators)]
        return CalibratedModel(type=self.kind, columns=self.columns, features=features,
                               sizes=list(self.sizes) or None, layout=self.layout)

    @classmethod
    def from_result(cls, model: CalibratedModel) -> TableModel:
        """The transform a Result's model describes."""
        calibrators = tuple(
            CategoricalCalibrator.declared(f.column, tuple(f.categories or ()),
                                           tuple(f.order or ()), f.monotonic)
            if f.kind == "categorical" else
            NumericCalibrator(f.column, np.array(f.keypoints, dtype=np.float64), f.monotonic,
                              f.convexity)
            for f in model.features)
        return cls(calibrators, tuple(model.sizes or ()))


def fit_calibrators(model: Any, tables: list[Table],
                    keypoints: Sequence[int]) -> tuple[Calibrator, ...]:
    """Every feature's calibrator; ``keypoints[j]`` is K when feature j gives none."""
    return tuple(fit_calibrator(feature, tables, keypoints[j], f"model.features[{j}]")
                 for j, feature in enumerate(model.features))


@dataclass(frozen=True)
class LinearTable(TableModel):
    """``calibrated_linear``: f(x) = bias + sum_j c_j(x_j), the outputs the parameters."""

    kind: ClassVar[str] = "calibrated_linear"
    layout: ClassVar[str] = ("parameter 0 is the bias; feature j's calibrator outputs are "
                             "parameters offset_j .. offset_j + len(outputs_j) - 1")

    @classmethod
    def fit(cls, model: Any, tables: list[Table]) -> LinearTable:
        """The calibrators of ``model`` (numeric ones default to 10 keypoints)."""
        return cls(fit_calibrators(model, tables, [DEFAULT_KEYPOINTS] * len(model.features)))

    @classmethod
    def row_entries(cls, categorical: Sequence[bool]) -> int:
        """The bias, two segment weights per numeric input, one indicator per categorical."""
        return 1 + sum(1 if flag else 2 for flag in categorical)

    @property
    def offsets(self) -> list[int]:
        """The first parameter of each feature's outputs."""
        return [int(k) for k in np.cumsum([1] + [c.size for c in self.calibrators[:-1]])]

    @property
    def d(self) -> int:
        """The bias and every calibrator's outputs."""
        return 1 + sum(calibrator.size for calibrator in self.calibrators)

    def offset(self, j: int) -> int | None:
        """The first parameter of feature j's outputs."""
        return self.offsets[j]

    def outputs(self, j: int, solution: np.ndarray | None) -> np.ndarray:
        """Feature j's outputs: its parameters in ``solution`` (zeros without one)."""
        size, offset = self.calibrators[j].size, self.offsets[j]
        return np.zeros(size) if solution is None else \
            np.asarray(solution)[offset:offset + size]

    def features(self, table: Table) -> sp.csr_matrix:
        """1 for the bias, then each feature's two segment weights or category indicator,
        CSR (n, d)."""
        blocks, values = [np.zeros((table.rows, 1), dtype=np.int64)], [np.ones((table.rows, 1))]
        for offset, calibrator in zip(self.offsets, self.calibrators, strict=True):
            if isinstance(calibrator, CategoricalCalibrator):
                blocks.append(offset + calibrator.codes(table)[:, None])
                values.append(np.ones((table.rows, 1)))
            else:
                segment, position = calibrator.segments(table)
                blocks.append(offset + np.column_stack([segment, segment + 1]))
                values.append(np.column_stack([1.0 - position, position]))
        indices, data = np.hstack(blocks), np.hstack(values)
        width = indices.shape[1]
        indptr = np.arange(0, table.rows * width + 1, width, dtype=np.int64)
        matrix = sp.csr_matrix((data.ravel(), indices.ravel().astype(np.int32), indptr),
                               shape=(table.rows, self.d))
        matrix.has_sorted_indices = True
        return matrix

    def constraints(self) -> list:
        """Ordering chains of monotonic calibrators and ordered categories, and the linear
        rows of convex or concave calibrators."""
        blocks: list = []
        for offset, calibrator in zip(self.offsets, self.calibrators, strict=True):
            monotone = isinstance(calibrator, CategoricalCalibrator) or \
                calibrator.monotonic != "none"
            chain = calibrator.chain() if monotone else []
            if len(chain) >= 2:
                blocks.append(OrderingConstraint(type="ordering",
                                                 chain=[offset + k for k in chain]))
            if isinstance(calibrator, NumericCalibrator) and calibrator.convexity != "none" \
                    and calibrator.size >= 3:
                rows, outputs, values = calibrator.curvature_rows()
                blocks.append(LinearConstraint(
                    type="linear", A=CooMatrix(format="coo", shape=(calibrator.size - 2, self.d),
                                               row=rows.tolist(),
                                               col=(offset + outputs).tolist(),
                                               data=values.tolist()),
                    b=[0.0] * (calibrator.size - 2)))
        return blocks


def _feature(calibrator: Calibrator, offset: int | None,
             outputs: np.ndarray) -> CalibratedFeature:
    """One feature of the Result's model."""
    if isinstance(calibrator, CategoricalCalibrator):
        return CalibratedFeature(column=calibrator.column, kind="categorical",
                                 categories=list(calibrator.categories),
                                 monotonic=calibrator.monotonic,
                                 order=list(calibrator.declared_order) or None,
                                 offset=offset, outputs=outputs.tolist())
    return CalibratedFeature(column=calibrator.column, kind="numeric",
                             keypoints=calibrator.keypoints.tolist(),
                             monotonic=calibrator.monotonic, convexity=calibrator.convexity,
                             offset=offset,
                             outputs=outputs.tolist())
