"""One deployed point on one data set: its objective, error and every constraint, as the
report's :class:`~worker.report.schema.ModelReport` (docs/results.md "The report")."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from worker.errors import SpecError
from worker.problem.rates import RATIOS
from worker.report.bootstrap import rate_intervals
from worker.report.group_loss import group_loss_report
from worker.report.metrics import (
    Deployed,
    Examples,
    error_value,
    objective_value,
    positive_probability,
    rate_indicator,
    rate_subset,
    rate_value,
    row_values,
)
from worker.report.schema import ConstraintReport, ModelReport, RateReport
from worker.spec.group_loss import GroupLossConstraint
from worker.spec.rates import PREDICTION_RATES, SIDES, RateConstraint, RateSum, RateTerm, side_terms


@dataclass(frozen=True)
class Definition:
    """What a report evaluates, from the spec.

    Attributes
    ----------
    loss : str or None
        The objective's loss (None: no loss on examples); ``l1``, ``l2`` its regularizer.
    blocks : list of (int, str, csr_matrix (m_k, d), ndarray (m_k,))
        Each linear-row block: its index in ``constraints``, type, unit-norm rows and rhs.
    rates : list of (int, RateConstraint, Examples or None)
        Each rate constraint, with its own examples (None: it counts on the data set's).
    group_losses : list of (int, GroupLossConstraint, Examples or None)
        Each group-loss constraint, with its own examples (None: the data set's).
    rate : RateTerm or None
        A rate objective's metric and group (its scale unused), reported as its true rate.
    """

    loss: str | None
    l1: float
    l2: float
    blocks: list[tuple[int, str, sp.csr_matrix, np.ndarray]] = field(default_factory=list)
    rates: list[tuple[int, RateConstraint, Examples | None]] = field(default_factory=list)
    group_losses: list[tuple[int, GroupLossConstraint, Examples | None]] = \
        field(default_factory=list)
    rate: RateTerm | None = None


#: Rate terms awaiting their intervals: (its report, subset (n,) bool, per-row value (n,)).
Pending = list[tuple[RateReport, np.ndarray, np.ndarray]]


def model_report(definition: Definition, examples: Examples, deployed: Deployed,
                 tolerance: float, *, own_data: bool = True,
                 pending: Pending | None = None) -> ModelReport:
    """``deployed`` on ``examples``. ``own_data``: evaluate the rates that have their own
    examples (else they are reported undefined); ``pending``: where the rates counted on
    ``examples`` are appended to get their intervals (:func:`add_intervals`)."""
    scores = deployed.scores(examples)
    labels = examples.labels
    objective = None if definition.loss is None or labels is None else \
        objective_value(definition.loss, definition.l1, definition.l2, deployed, scores, labels,
                        examples.weights)
    error = error_value(deployed, scores, labels, examples.weights) \
        if examples.classes or examples.multiclass else None
    positive = positive_probability(deployed, scores) \
        if definition.rates or definition.rate else None
    if definition.rate is not None:
        objective = _objective_rate(definition.rate, examples, positive)
    constraints = [_block_report(index, kind, rows, rhs, deployed, tolerance)
                   for index, kind, rows, rhs in definition.blocks]
    for index, constraint, own in definition.rates:
        if own is None:
            constraints.append(_rate_report(index, constraint, examples, positive, tolerance,
                                            pending))
        elif own_data:
            constraints.append(_rate_report(index, constraint, own,
                                            positive_probability(deployed, deployed.scores(own)),
                                            tolerance))
        else:
            constraints.append(_undefined_rate(index, constraint))
    for index, bounded, own in definition.group_losses:
        counted = examples if own is None else own if own_data else None
        constraints.append(group_loss_report(index, bounded, counted, deployed, tolerance))
    constraints.sort(key=lambda c: c.index)
    worst = [c.worst for c in constraints if c.worst is not None]
    return ModelReport(objective=objective, error=error,
                       max_violation=max(0.0, max(worst, default=0.0)), constraints=constraints)


def _block_report(index: int, kind: str, rows: sp.csr_matrix, rhs: np.ndarray,
                  deployed: Deployed, tolerance: float) -> ConstraintReport:
    values = row_values(rows, rhs, deployed)
    return ConstraintReport(index=index, type=kind, rows=int(values.size),
                            violated=int(np.count_nonzero(values > tolerance)),
                            worst=float(values.max()) if values.size else None)


def _objective_rate(term: RateTerm, examples: Examples, positive: np.ndarray) -> float | None:
    """A rate objective's true rate from P(positive) per row (n,), weighted as the examples
    are (None where it counts no example)."""
    group = _group(term, examples, None)
    return rate_value(term.metric, rate_subset(term.metric, group, examples.labels),
                      rate_indicator(term.metric, positive, examples.labels), examples.labels,
                      examples.weights)


def _side_terms(constraint: RateConstraint) -> list[tuple[str, RateTerm]]:
    """Every term with its side, lhs first."""
    return [(name, term) for name in SIDES
            for _, term in side_terms(getattr(constraint, name), name)[0]]


def _rate_report(index: int, constraint: RateConstraint, examples: Examples,
                 positive: np.ndarray | None, tolerance: float,
                 pending: Pending | None = None) -> ConstraintReport:
    """g = lhs - rhs (``<=``) or rhs - lhs (``>=``) of P(positive) per row (n,)."""
    reports = []
    for side, term in _side_terms(constraint):
        group = _group(term, examples, index)
        subset = rate_subset(term.metric, group, examples.labels)
        indicator = rate_indicator(term.metric, positive, examples.labels)
        reports.append(RateReport(side=side, metric=term.metric, group=term.group,
                                  scale=term.scale, examples=int(subset.sum()),
                                  group_size=int(group.sum()),
                                  value=rate_value(term.metric, subset, indicator,
                                                   examples.labels, examples.weights)))
        if pending is not None and term.metric not in RATIOS and examples.weights is None:
            pending.append((reports[-1], subset, indicator))
    return _constraint_report(index, constraint, reports, tolerance)


def _constraint_report(index: int, constraint: RateConstraint, terms: list[RateReport],
                       tolerance: float) -> ConstraintReport:
    """The constraint's row: each side's value, their difference and g."""
    constants = {name: side_terms(getattr(constraint, name), name)[1] for name in SIDES}
    values: dict[str, float | None] = {}
    for name in SIDES:
        own = [t for t in terms if t.side == name]
        values[name] = None if any(t.value is None for t in own) else \
            constants[name] + sum(t.scale * t.value for t in own)
    lhs, rhs = values["lhs"], values["rhs"]
    difference = None if lhs is None or rhs is None else float(lhs - rhs)
    worst = None if difference is None else \
        difference if constraint.op == "<=" else -difference
    return ConstraintReport(index=index, type="rate", rows=1,
                            violated=int(worst is not None and worst > tolerance), worst=worst,
                            op=constraint.op, bound=_bound(constraint), terms=terms,
                            lhs_constant=constants["lhs"], rhs_constant=constants["rhs"],
                            lhs=lhs, rhs=rhs, difference=difference)


def add_intervals(pending: Pending, resamples: int, seed: int) -> None:
    """Every pending rate's bootstrap interval, all from the same resamples of the rows."""
    intervals = rate_intervals([subset for _, subset, _ in pending],
                               [values for _, _, values in pending],
                               resamples=resamples, seed=seed)
    for (report, _, _), interval in zip(pending, intervals, strict=True):
        report.interval = None if interval is None else list(interval)


def _undefined_rate(index: int, constraint: RateConstraint) -> ConstraintReport:
    """A rate counted on its own examples, reported on other data: undefined there."""
    terms = [RateReport(side=side, metric=t.metric, group=t.group, scale=t.scale, examples=0,
                        group_size=0, value=None) for side, t in _side_terms(constraint)]
    return _constraint_report(index, constraint, terms, 0.0)


def _bound(constraint: RateConstraint) -> float | None:
    return None if isinstance(constraint.rhs, RateTerm | RateSum) else float(constraint.rhs)


def _group(term: RateTerm, examples: Examples, index: int | None) -> np.ndarray:
    """The rows (bool, (n,)) of the term's group; every row for ``group: null``; ``index``:
    the term's constraint (None: the objective)."""
    where = "objective" if index is None else f"constraints[{index}]"
    if not examples.classes and term.metric not in PREDICTION_RATES:
        raise SpecError.at(where, f"{term.metric} needs +-1 labels; give class labels for "
                           "these data")
    if term.group is None:
        return np.ones(examples.n, dtype=bool)
    if term.group not in examples.groups:
        known = ", ".join(sorted(examples.groups)) or "none"
        raise SpecError.at(where, f"group {term.group!r} is not among the report's data "
                           f"groups ({known}); give it for these data")
    return examples.groups[term.group]
