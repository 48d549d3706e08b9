"""``calibrated_lattice`` on raw tables (docs/tables.md): each input mapped onto a lattice
axis, simplex interpolation onto the vertices, whose values are the parameters. It
compiles by its lowering (:func:`worker.tables.lower.lower_tables` with
:class:`~worker.tables.lattice.LatticeTable`) to the linear problem over the simplex
weights; the Result describes it as a :class:`~worker.result.CalibratedModel`, which
scores raw rows."""

from __future__ import annotations

import math
from functools import partial

from worker.model_types.record import ModelType, deploy_table
from worker.result import CalibratedModel
from worker.spec.tables import CalibratedLattice
from worker.tables.lattice import LatticeTable
from worker.tables.lower import lower_tables


def _declared_parameters(model: CalibratedLattice, d: int) -> int:
    """The lattice's vertices (a categorical input with ``"auto"`` categories counted at
    its ``sizes`` entry until the table is read)."""
    return math.prod(model.sizes)


RECORD = ModelType("calibrated_lattice", CalibratedLattice, CalibratedModel,
                   _declared_parameters, partial(lower_tables, transform=LatticeTable),
                   deploy_table(LatticeTable))
