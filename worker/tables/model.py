"""A calibrated model's fixed transform from raw rows to the engine's features, its
constraints, and its description in the Result (:class:`worker.result.CalibratedModel`).

``calibrated_linear``: parameters ``[bias, outputs of feature 0, outputs of feature 1, ...]``;
a row's features are 1 for the bias, ``(1 - t, t)`` on its segment's two outputs for a
numeric feature and 1 on its category's output for a categorical one, so the score is
``bias + sum_j c_j(x_j)``. ``calibrated_lattice``: parameters are the lattice's vertex
values (C order over ``sizes``); a row's features are its simplex weights
(:mod:`worker.tables.lattice`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from worker.data.refs import CooMatrix
from worker.result import CalibratedFeature, CalibratedModel
from worker.spec.models import LinearConstraint, MonotoneLatticeConstraint, OrderingConstraint
from worker.tables.calibrators import Calibrator, CategoricalCalibrator, NumericCalibrator
from worker.tables.columns import Table
from worker.tables.lattice import lattice_points, simplex_matrix

LINEAR, LATTICE = "calibrated_linear", "calibrated_lattice"

_LAYOUTS = {
    LINEAR: "parameter 0 is the bias; feature j's calibrator outputs are parameters "
            "offset_j .. offset_j + len(outputs_j) - 1",
    LATTICE: "parameters are the lattice vertices' values, C order over sizes",
}


@dataclass(frozen=True)
class TableModel:
    """The fixed part of a calibrated model: its kind, calibrators and lattice sizes."""

    kind: str
    calibrators: tuple[Calibrator, ...]
    sizes: tuple[int, ...] = ()

    @property
    def columns(self) -> list[str]:
        """The columns the model reads, in feature order."""
        return [calibrator.column for calibrator in self.calibrators]

    @property
    def offsets(self) -> list[int]:
        """The first parameter of each feature's outputs (calibrated_linear)."""
        return [int(k) for k in np.cumsum([1] + [c.size for c in self.calibrators[:-1]])]

    @property
    def d(self) -> int:
        """The number of parameters."""
        if self.kind == LATTICE:
            return math.prod(self.sizes)
        return 1 + sum(calibrator.size for calibrator in self.calibrators)

    def features(self, table: Table) -> sp.csr_matrix:
        """The engine's feature rows of a table's rows, CSR (n, d)."""
        if self.kind == LATTICE:
            return simplex_matrix(lattice_points(self.calibrators, self.sizes, table),
                                  self.sizes)
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

    def constraints(self, path: str = "model") -> list:
        """The spec's constraint blocks the features' shapes ask for: ``monotone_lattice``
        along monotonic lattice inputs; ordering chains of monotonic calibrators and ordered
        categories, and the linear rows of convex or concave calibrators."""
        if self.kind == LATTICE:
            axes = {kind: [j for j, c in enumerate(self.calibrators) if c.monotonic == kind]
                    for kind in ("increasing", "decreasing")}
            if not axes["increasing"] and not axes["decreasing"]:
                return []
            return [MonotoneLatticeConstraint(type="monotone_lattice", shape=list(self.sizes),
                                              **axes)]
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

    def describe(self, solution: np.ndarray | None) -> CalibratedModel:
        """The Result's model; a linear model's outputs are ``solution``'s (shape (d,))."""
        features = []
        for j, calibrator in enumerate(self.calibrators):
            offset = self.offsets[j] if self.kind == LINEAR else None
            if self.kind == LATTICE:
                outputs = np.linspace(0.0, self.sizes[j] - 1, calibrator.size)
            else:
                outputs = np.zeros(calibrator.size) if solution is None else \
                    np.asarray(solution)[offset:offset + calibrator.size]
            features.append(_feature(calibrator, offset, outputs))
        return CalibratedModel(type=self.kind, columns=self.columns, features=features,
                               sizes=list(self.sizes) if self.kind == LATTICE else None,
                               layout=_LAYOUTS[self.kind])

    @classmethod
    def from_result(cls, model: CalibratedModel) -> TableModel:
        """The transform a Result's model describes."""
        calibrators = tuple(
            CategoricalCalibrator(f.column, tuple(f.categories or ()), tuple(f.order or ()))
            if f.kind == "categorical" else
            NumericCalibrator(f.column, np.array(f.keypoints, dtype=np.float64), f.monotonic,
                              f.convexity)
            for f in model.features)
        return cls(model.type, calibrators, tuple(model.sizes or ()))


def _feature(calibrator: Calibrator, offset: int | None,
             outputs: np.ndarray) -> CalibratedFeature:
    """One feature of the Result's model."""
    if isinstance(calibrator, CategoricalCalibrator):
        return CalibratedFeature(column=calibrator.column, kind="categorical",
                                 categories=list(calibrator.categories),
                                 order=list(calibrator.order) or None,
                                 offset=offset, outputs=outputs.tolist())
    return CalibratedFeature(column=calibrator.column, kind="numeric",
                             keypoints=calibrator.keypoints.tolist(),
                             monotonic=calibrator.monotonic, convexity=calibrator.convexity,
                             offset=offset,
                             outputs=outputs.tolist())
