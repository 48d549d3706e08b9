"""The spec's constraint types, one :class:`ConstraintType` record each in
:data:`CONSTRAINT_TYPES`; :mod:`worker.problem.compile` compiles every block through it.

A type compiles into one of two forms:

* :data:`ROWS`: linear rows ``g(w) = A w - b <= 0`` with unit-norm rows, stacked in spec
  order into the problem's :class:`~worker.problem.compiled.ConstraintSet`. Every algorithm
  and :func:`worker.projection.project` work on these rows, so a new linear type needs its
  spec model, a module with its row function and one line here.
* :data:`RATES`: rates of predictions, not linear in w, compiled all at once into the
  problem's :class:`~worker.problem.rates.RateSet`; only the game algorithms handle them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from worker.problem.compile_rates import compile_rates
from worker.problem.compiled import ConstraintSet
from worker.problem.lattice_rows import declared_lattice_rows, lattice_rows
from worker.problem.linear_rows import linear_rows
from worker.problem.ordering_rows import declared_ordering_rows, ordering_rows
from worker.problem.rates import RateSet
from worker.spec.models import (
    LinearConstraint,
    MonotoneLatticeConstraint,
    OrderingConstraint,
    RateConstraint,
)

#: Compiled into the problem's linear rows, one block at a time.
ROWS = "rows"
#: Compiled into the problem's rate set, all blocks of the type at once.
RATES = "rates"


@dataclass(frozen=True)
class ConstraintType:
    """One ``constraints[k].type`` of the spec.

    Attributes
    ----------
    name : str
        The spec's ``type``.
    model : type
        Its pydantic model in :mod:`worker.spec.models` (a member of its ``Constraint``).
    form : str
        :data:`ROWS` or :data:`RATES`.
    compile : callable
        :data:`ROWS`: ``(constraint, path, d, source, notes) -> (rows, rhs)`` with rows a
        unit-norm CSR of shape (m_k, d) and rhs of shape (m_k,).
        :data:`RATES`: ``(spec, objective, source, d) -> RateSet or None``, over every block
        of the type in spec order.
    evaluate : callable
        ``(compiled form, w) -> g(w)``, shape (m,) for w of shape (d,); a block is violated
        where g > 0 (:meth:`ConstraintSet.values`, :meth:`RateSet.values`).
    declared : callable
        ``constraint -> (rows, nonzeros)`` the block compiles to, as far as the spec alone
        fixes them (:func:`worker.pipeline.memory.declared_parts`, before any data are
        read); :func:`undeclared` for blocks sized by their data.
    projection : str or None
        The path of :func:`worker.projection.project` when every row comes from types with
        this path: ``"isotonic"`` (exact isotonic regression on an order, which itself falls
        back to ``"qp"`` when it does not apply) or ``"qp"``; any ``"qp"`` type in the mix
        makes the whole projection ``"qp"``. None: not projected (a problem with rates
        returns no projected point).
    """

    name: str
    model: type[BaseModel]
    form: str
    compile: Callable
    evaluate: Callable
    declared: Callable[[Any], tuple[int, int]]
    projection: str | None


def undeclared(constraint: BaseModel) -> tuple[int, int]:
    """No rows known before the data are read (a block whose size is in its data)."""
    return 0, 0


CONSTRAINT_TYPES: dict[str, ConstraintType] = {record.name: record for record in (
    ConstraintType("linear", LinearConstraint, ROWS, linear_rows, ConstraintSet.values,
                   undeclared, "qp"),
    ConstraintType("ordering", OrderingConstraint, ROWS, ordering_rows, ConstraintSet.values,
                   declared_ordering_rows, "isotonic"),
    ConstraintType("monotone_lattice", MonotoneLatticeConstraint, ROWS, lattice_rows,
                   ConstraintSet.values, declared_lattice_rows, "isotonic"),
    ConstraintType("rate", RateConstraint, RATES, compile_rates, RateSet.values, undeclared,
                   None),
)}
