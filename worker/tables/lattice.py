"""``calibrated_lattice``: the fixed input map of a calibrated lattice
(:class:`LatticeTable`) and simplex interpolation onto its vertices.

Numeric input j's calibrator takes its K_j keypoints, in order, to the evenly spaced lattice
coordinates ``0, (s_j - 1)/(K_j - 1), ..., s_j - 1`` (constant outside the keypoints); a
categorical input's C_j categories sit at the coordinates ``0 .. C_j - 1`` (``s_j = C_j``),
in the order from lowest to highest when it has one, else in the order of its categories;
the point ``u`` so obtained is interpolated onto the vertices of its simplex in the Freudenthal
triangulation of the lattice (:func:`worker.kernels.calibration.simplex_cells`). Vertices are
flattened in C order over ``sizes`` (``numpy.ravel_multi_index``), as the
``monotone_lattice`` constraint lays them out. With 12 inputs of size 2 and keypoints
``[0, 1]`` this is the LightTouch paper's §6 model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from worker.errors import DataError
from worker.kernels.calibration import simplex_cells
from worker.spec.models import MonotoneLatticeConstraint
from worker.spec.tables import MAX_LATTICE_VERTICES
from worker.tables.calibrators import Calibrator, CategoricalCalibrator
from worker.tables.columns import Table
from worker.tables.model import TableModel, fit_calibrators


def lattice_strides(sizes: Sequence[int]) -> np.ndarray:
    """C-order stride of each axis, ``prod(sizes[j+1:])``, int64 (D,)."""
    strides = np.ones(len(sizes), dtype=np.int64)
    for j in range(len(sizes) - 2, -1, -1):
        strides[j] = strides[j + 1] * sizes[j + 1]
    return strides


def lattice_points(calibrators: Sequence[Calibrator], sizes: Sequence[int],
                   table: Table) -> np.ndarray:
    """Each row's lattice coordinates ``u``, float64 (n, D), ``0 <= u_j <= s_j - 1``."""
    points = np.empty((table.rows, len(sizes)), dtype=np.float64)
    for j, (calibrator, size) in enumerate(zip(calibrators, sizes, strict=True)):
        if isinstance(calibrator, CategoricalCalibrator):
            points[:, j] = calibrator.ranks()[calibrator.codes(table)]
            continue
        segment, position = calibrator.segments(table)
        step = (size - 1) / (calibrator.size - 1)
        np.multiply(segment + position, step, out=points[:, j])
        np.minimum(points[:, j], size - 1, out=points[:, j])
    return points


def simplex_matrix(points: np.ndarray, sizes: Sequence[int]) -> sp.csr_matrix:
    """Simplex interpolation weights of lattice points.

    Parameters
    ----------
    points : ndarray of float64, shape (n, D)
        Lattice coordinates, ``0 <= u_j <= s_j - 1``.
    sizes : sequence of int, length D
        Lattice sizes, each >= 2.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, prod(sizes))
        D + 1 entries a row, column indices strictly increasing; exact zeros are kept so
        every row has the same entries (as :mod:`worker.datasets.simplex` does).
    """
    n, dims = points.shape
    vertices = np.empty((n, dims + 1), dtype=np.int32)
    weights = np.empty((n, dims + 1), dtype=np.float64)
    simplex_cells(np.ascontiguousarray(points), np.asarray(sizes, dtype=np.int64),
                  lattice_strides(sizes), np.empty(dims), np.empty(dims, dtype=np.int64),
                  vertices, weights)
    indptr = np.arange(0, n * (dims + 1) + 1, dims + 1, dtype=np.int64)
    matrix = sp.csr_matrix((weights.ravel(), vertices.ravel(), indptr),
                           shape=(n, math.prod(sizes)), copy=False)
    matrix.has_sorted_indices = True
    return matrix


@dataclass(frozen=True)
class LatticeTable(TableModel):
    """``calibrated_lattice``: the parameters are the values of the lattice's vertices (C
    order over ``sizes``); a row's features are its simplex weights."""

    kind: ClassVar[str] = "calibrated_lattice"
    layout: ClassVar[str] = "parameters are the lattice vertices' values, C order over sizes"

    @classmethod
    def fit(cls, model: Any, tables: list[Table]) -> LatticeTable:
        """The calibrators of ``model`` (a numeric input defaults to s_j keypoints) and the
        lattice's sizes, a categorical input's its number of categories.

        Raises
        ------
        DataError
            A categorical input whose categories (``"auto"``: those the tables hold) do not
            fit the lattice: fewer than 2, another size listed in ``lattice.sizes``, an
            order that leaves one out, or a lattice over 2^22 vertices.
        """
        declared = model.sizes
        calibrators = fit_calibrators(model, tables, declared)
        sizes = tuple(_axis_size(model, j, calibrator, declared[j])
                      for j, calibrator in enumerate(calibrators))
        vertices = math.prod(sizes)
        if vertices > MAX_LATTICE_VERTICES:
            raise DataError("model.lattice.sizes", f"with the categories the tables hold, "
                            f"the lattice would have {vertices:,} vertices, over "
                            f"{MAX_LATTICE_VERTICES:,} (2^22); use fewer features or "
                            "categories")
        return cls(calibrators, sizes)

    @classmethod
    def row_entries(cls, categorical: Sequence[bool]) -> int:
        """A simplex's vertices: one more than the inputs."""
        return len(categorical) + 1

    @property
    def d(self) -> int:
        """The number of vertices."""
        return math.prod(self.sizes)

    def outputs(self, j: int, solution: np.ndarray | None) -> np.ndarray:
        """Input j's lattice coordinates: of its keypoints, or of its categories."""
        calibrator = self.calibrators[j]
        if isinstance(calibrator, CategoricalCalibrator):
            return calibrator.ranks().astype(np.float64)
        return np.linspace(0.0, self.sizes[j] - 1, calibrator.size)

    def features(self, table: Table) -> sp.csr_matrix:
        """Each row's simplex weights, CSR (n, d)."""
        return simplex_matrix(lattice_points(self.calibrators, self.sizes, table), self.sizes)

    def constraints(self) -> list:
        """``monotone_lattice`` along the monotonic numeric inputs and the ordered
        categorical ones (increasing from the lowest category)."""
        axes: dict[str, list[int]] = {"increasing": [], "decreasing": []}
        for j, calibrator in enumerate(self.calibrators):
            if isinstance(calibrator, CategoricalCalibrator):
                if calibrator.order:
                    axes["increasing"].append(j)
            elif calibrator.monotonic != "none":
                axes[calibrator.monotonic].append(j)
        if not axes["increasing"] and not axes["decreasing"]:
            return []
        return [MonotoneLatticeConstraint(type="monotone_lattice", shape=list(self.sizes),
                                          **axes)]


def _axis_size(model: Any, j: int, calibrator: Calibrator, declared: int) -> int:
    """Input j's lattice size: ``declared``, or a categorical input's number of categories
    (which a ``sizes`` list must state; an order must list them all)."""
    if not isinstance(calibrator, CategoricalCalibrator):
        return declared
    count, column = calibrator.size, calibrator.column
    if count < 2:
        raise DataError(f"model.features[{j}]", f"column {column!r} holds only "
                        f"{list(calibrator.categories)}; a lattice input needs 2 or more "
                        "categories")
    if isinstance(model.lattice.sizes, list) and declared != count:
        raise DataError(f"model.lattice.sizes[{j}]", f"column {column!r} has {count} "
                        f"categories, so its lattice size is {count}, not {declared}; "
                        f"give {count}")
    if calibrator.order and len(calibrator.order) != count:
        missing = [c for c in calibrator.categories if c not in calibrator.order]
        raise DataError(f"model.features[{j}]", f"column {column!r}: monotonic_order leaves "
                        f"out {missing[0]!r}; a lattice input's order lists every category")
    return count
