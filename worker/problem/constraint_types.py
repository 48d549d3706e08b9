"""The spec's constraint types, one :class:`ConstraintType` record each in
:data:`CONSTRAINT_TYPES`; :mod:`worker.problem.compile` compiles every block through it.

A type compiles into one of two forms:

* :data:`ROWS`: linear rows ``g(w) = A w - b <= 0`` with unit-norm rows, stacked in spec
  order into the problem's :class:`~worker.problem.compiled.ConstraintSet`. Every algorithm
  and :func:`worker.projection.project` work on these rows, so a new linear type needs its
  spec model, a module with its row function and one line here. A type whose rows are
  orderings ``w_i <= w_j`` gives the pairs instead (:attr:`ConstraintType.orderings`): the
  projection then knows them and, when every block of a problem is such a type, takes its
  exact isotonic path.
* :data:`RATES`: rates of predictions, not linear in w, compiled all at once into the
  problem's :class:`~worker.problem.rates.RateSet`; only the game algorithms handle them.
* :data:`GROUP_LOSSES`: a group's mean loss against a bound, compiled into the network
  problem's bounded terms (:class:`~worker.problem.network.BoundedTerm`; a linear model
  under them is a one-layer network); the network games and the exact epigraph program
  handle them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from worker.problem.compile_group_loss import compile_group_losses
from worker.problem.compile_rates import compile_rates
from worker.problem.compiled import ConstraintSet
from worker.problem.lattice_rows import declared_lattice_rows, lattice_pairs
from worker.problem.linear_rows import linear_rows
from worker.problem.network import NetworkProblem
from worker.problem.ordering_rows import declared_ordering_rows, ordering_pairs
from worker.problem.rates import RateSet
from worker.spec.models import (
    GroupLossConstraint,
    LinearConstraint,
    MonotoneLatticeConstraint,
    OrderingConstraint,
    RateConstraint,
)

#: Compiled into the problem's linear rows, one block at a time.
ROWS = "rows"
#: Compiled into the problem's rate set, all blocks of the type at once.
RATES = "rates"
#: Compiled into a network problem's bounded terms, all blocks of the type at once.
GROUP_LOSSES = "group_losses"


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
    compile : callable or None
        :data:`ROWS`: ``(constraint, path, d, source, notes) -> (rows, rhs)`` with rows a
        unit-norm CSR of shape (m_k, d) and rhs of shape (m_k,); None for a type that gives
        ``orderings`` instead.
        :data:`RATES`: ``(spec, objective, source, d, true_rate) -> RateSet or None``, over
        every block of the type in spec order (``true_rate``: a rate objective's, or None).
        :data:`GROUP_LOSSES`: ``(spec, (features, labels, weights or None), source, d) ->
        [BoundedTerm]``, over every block of the type in spec order, on the objective's
        examples (or each block's own).
    evaluate : callable
        ``(compiled form, w) -> g(w)``, shape (m,) for w of shape (d,); a block is violated
        where g > 0 (:meth:`ConstraintSet.values`, :meth:`RateSet.values`,
        :meth:`NetworkProblem.bounded_values` of the parameters (T, P)).
    declared : callable
        ``constraint -> (rows, nonzeros)`` the block compiles to, as far as the spec alone
        fixes them (:func:`worker.pipeline.memory.declared_parts`, before any data are
        read); :func:`undeclared` for blocks sized by their data.
    orderings : callable or None
        For a :data:`ROWS` type whose rows are orderings: ``(constraint, path, d) -> pairs``
        of shape (m_k, 2), row (i, j) meaning ``w_i <= w_j``; its rows are
        :meth:`ConstraintSet.of_orderings` of them, which carry the pairs to
        :func:`worker.projection.project`. None: general rows from ``compile``.
    """

    name: str
    model: type[BaseModel]
    form: str
    compile: Callable | None
    evaluate: Callable
    declared: Callable[[Any], tuple[int, int]]
    orderings: Callable[[Any, str, int], np.ndarray] | None = None

    @property
    def projection(self) -> str | None:
        """The path of :func:`worker.projection.project` when every row comes from types
        with this path: ``"isotonic"`` (orderings: exact isotonic regression on their
        order, which itself falls back to ``"qp"`` when it does not apply) or ``"qp"``; any
        ``"qp"`` type in the mix makes the whole projection ``"qp"``. None: not projected
        (a problem with rates returns no projected point)."""
        if self.form != ROWS:
            return None
        return "qp" if self.orderings is None else "isotonic"

    def rows(self, constraint: BaseModel, path: str, d: int, source,
             notes: list[str]) -> ConstraintSet:
        """A :data:`ROWS` block compiled: its orderings' rows (with the pairs), or the rows
        of ``compile``."""
        if self.orderings is not None:
            return ConstraintSet.of_orderings(self.orderings(constraint, path, d), d)
        return ConstraintSet(*self.compile(constraint, path, d, source, notes))


def undeclared(constraint: BaseModel) -> tuple[int, int]:
    """No rows known before the data are read (a block whose size is in its data)."""
    return 0, 0


CONSTRAINT_TYPES: dict[str, ConstraintType] = {record.name: record for record in (
    ConstraintType("linear", LinearConstraint, ROWS, linear_rows, ConstraintSet.values,
                   undeclared),
    ConstraintType("ordering", OrderingConstraint, ROWS, None, ConstraintSet.values,
                   declared_ordering_rows, orderings=ordering_pairs),
    ConstraintType("monotone_lattice", MonotoneLatticeConstraint, ROWS, None,
                   ConstraintSet.values, declared_lattice_rows, orderings=lattice_pairs),
    ConstraintType("rate", RateConstraint, RATES, compile_rates, RateSet.values, undeclared),
    ConstraintType("group_loss", GroupLossConstraint, GROUP_LOSSES, compile_group_losses,
                   NetworkProblem.bounded_values, undeclared),
)}
