"""One deployed point on one data set: its objective, error and every constraint, as the
report's :class:`~worker.report.schema.ModelReport` (docs/results.md "The report"), made from
the point's :class:`~worker.report.counts.Counts` on the data (:func:`finished`), counted in
one block (:func:`model_report`) or added over partitions."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from worker.problem.rates import RATIOS
from worker.report.bootstrap import rate_intervals
from worker.report.counts import (
    DENOMINATOR,
    GROUP,
    NUMERATOR,
    SUBSET,
    Counts,
    Term,
    counts_of,
    side_terms_of,
)
from worker.report.group_loss import group_loss_report
from worker.report.metrics import Deployed, Examples, rate_of, regularized, row_values
from worker.report.schema import ConstraintReport, ModelReport, RateReport
from worker.spec.group_loss import GroupLossConstraint
from worker.spec.rates import SIDES, RateConstraint, RateSum, RateTerm, side_terms


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


def counted_terms(definition: Definition) -> list[Term]:
    """The rate terms counted on the data set's own rows, in the order of
    :attr:`~worker.report.counts.Counts.terms`: a rate objective's, then each side term of
    every rate constraint without examples of its own."""
    terms: list[Term] = [] if definition.rate is None else [(None, definition.rate)]
    for index, constraint, own in definition.rates:
        if own is None:
            terms += [(index, term) for _, term in side_terms_of(constraint)]
    return terms


def model_report(definition: Definition, examples: Examples, deployed: Deployed,
                 tolerance: float, *, own_data: bool = True,
                 pending: Pending | None = None) -> ModelReport:
    """``deployed`` on ``examples``. ``own_data``: evaluate the rates that have their own
    examples (else they are reported undefined); ``pending``: where the rates counted on
    ``examples`` are appended to get their intervals (:func:`add_intervals`; unweighted
    examples only)."""
    rows = [] if pending is not None and examples.weights is None else None
    counts = counts_of(definition.loss, counted_terms(definition), examples, deployed, rows)
    elsewhere = []
    for index, constraint, own in definition.rates:
        if own is not None:
            terms = [(index, term) for _, term in side_terms_of(constraint)]
            sums = counts_of(None, terms, own, deployed).terms if own_data else \
                np.zeros((len(terms), 4))              # undefined on other data
            elsewhere.append(_rate_report(index, constraint, sums, tolerance))
    for index, bounded, own in definition.group_losses:
        counted = examples if own is None else own if own_data else None
        elsewhere.append(group_loss_report(index, bounded, counted, deployed, tolerance))
    report = finished(definition, counts, deployed, tolerance, elsewhere)
    if rows is not None:
        by_index = {c.index: c for c in report.constraints}
        reports = [term for index, _, own in definition.rates if own is None
                   for term in by_index[index].terms]
        for term, (subset, indicator) in zip(reports, rows[definition.rate is not None:],
                                             strict=True):
            if term.metric not in RATIOS:
                pending.append((term, subset, indicator))
    return report


def finished(definition: Definition, counts: Counts, deployed: Deployed, tolerance: float,
             elsewhere: list[ConstraintReport] | None = None) -> ModelReport:
    """The report of ``deployed`` from its ``counts`` on a data set's rows (of the loss and
    :func:`counted_terms`): the objective, the error, each linear-row block, each rate
    constraint counted on these rows, and the rows reported ``elsewhere`` (rates on their own
    examples, group losses)."""
    objective = None if counts.losses is None else regularized(
        definition.l1, definition.l2, deployed, counts.losses / counts.mass)
    error = None if counts.wrong is None else \
        float(deployed.weights @ (counts.wrong / counts.mass))
    sums = iter(counts.terms)
    if definition.rate is not None:
        own = next(sums)
        objective = rate_of(own[NUMERATOR], own[DENOMINATOR])
    constraints = [_block_report(index, kind, rows, rhs, deployed, tolerance)
                   for index, kind, rows, rhs in definition.blocks]
    for index, constraint, own in definition.rates:
        if own is None:
            terms = np.array([next(sums) for _ in side_terms_of(constraint)])
            constraints.append(_rate_report(index, constraint, terms, tolerance))
    constraints = sorted([*constraints, *(elsewhere or [])], key=lambda c: c.index)
    worst = [c.worst for c in constraints if c.worst is not None]
    return ModelReport(objective=objective, error=error,
                       max_violation=max(0.0, max(worst, default=0.0)), constraints=constraints)


def _block_report(index: int, kind: str, rows: sp.csr_matrix, rhs: np.ndarray,
                  deployed: Deployed, tolerance: float) -> ConstraintReport:
    values = row_values(rows, rhs, deployed)
    return ConstraintReport(index=index, type=kind, rows=int(values.size),
                            violated=int(np.count_nonzero(values > tolerance)),
                            worst=float(values.max()) if values.size else None)


def _rate_report(index: int, constraint: RateConstraint, sums: np.ndarray,
                 tolerance: float) -> ConstraintReport:
    """The constraint's row from its terms' counts (s, 4), in :func:`side_terms_of` order
    (all 0: undefined on these data)."""
    terms = [RateReport(side=side, metric=term.metric, group=term.group, scale=term.scale,
                        examples=int(row[SUBSET]), group_size=int(row[GROUP]),
                        value=rate_of(row[NUMERATOR], row[DENOMINATOR]))
             for (side, term), row in zip(side_terms_of(constraint), sums, strict=True)]
    return _constraint_report(index, constraint, terms, tolerance)


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


def _bound(constraint: RateConstraint) -> float | None:
    return None if isinstance(constraint.rhs, RateTerm | RateSum) else float(constraint.rhs)
