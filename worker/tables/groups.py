"""Groups of rows by column predicates, for rate constraints: ``equals`` a value, ``in`` a
list, a numeric range (``gt``, ``gte``, ``lt``, ``lte``) and ``all_of`` (intersections).

Values that are all numbers are compared with the column read as numbers; otherwise the
column is compared as whitespace-stripped text (numbers as they print: ``40``, ``2.5``).
"""

from __future__ import annotations

import operator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from worker.spec.tables import AllOfGroup, ColumnGroup, GroupPredicate
from worker.tables.columns import Table

_COMPARE = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}


def group_mask(predicate: GroupPredicate, table: Table) -> np.ndarray:
    """The rows in the group, bool (n,)."""
    if isinstance(predicate, AllOfGroup):
        mask = np.ones(table.rows, dtype=bool)
        for part in predicate.all_of:
            mask &= group_mask(part, table)
        return mask
    assert isinstance(predicate, ColumnGroup)
    if predicate.bounds:
        values = table.numbers(predicate.column, "; a range compares numbers")
        mask = np.ones(table.rows, dtype=bool)
        for name, bound in predicate.bounds.items():
            mask &= _COMPARE[name](values, bound)
        return mask
    wanted = [predicate.equals] if predicate.equals is not None else list(predicate.in_ or ())
    if all(isinstance(value, int | float) and not isinstance(value, bool) for value in wanted):
        return np.isin(table.numbers(predicate.column, "; compare text with text values"),
                       np.array(wanted, dtype=np.float64))
    texts = pa.array([str(value) for value in wanted], pa.string())
    return np.asarray(pc.is_in(table.text(predicate.column), value_set=texts)
                      .to_numpy(zero_copy_only=False), dtype=bool)
