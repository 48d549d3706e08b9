"""A Result's report from its spec, its data and its deployed points
(:func:`solve_report`, called by the pipeline; :func:`counted_report` for training rows
left in partitions, from the points' counts added where the rows are), and the same report
on other data (:func:`report_on`, ``lighttouch report``).

Reported: linear models and networks on one empirical risk (hinge, logistic, squared,
squared hinge, softmax cross-entropy), and a rate objective (its true rate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from worker.data.labels import LABELS, checked_labels, label_kind
from worker.errors import SpecError
from worker.losses import CLASSES, LOSSES, SOFTMAX_CROSS_ENTROPY
from worker.problem.compile import DataSource
from worker.problem.compile_rates import group_rows
from worker.problem.constraint_types import CONSTRAINT_TYPES, ROWS
from worker.problem.csr import as_csr
from worker.problem.weights import example_weights
from worker.report.bootstrap import LEVEL, RESAMPLES
from worker.report.counts import Counts, Term
from worker.report.evaluate import (
    Definition,
    Pending,
    add_intervals,
    counted_terms,
    finished,
    model_report,
)
from worker.report.metrics import Deployed, Examples, group_masks
from worker.report.schema import (
    MODEL_NAMES,
    Bootstrap,
    ConstraintReport,
    DataReport,
    ObjectiveDefinition,
    Report,
)
from worker.report.split import SplitSource
from worker.spec.group_loss import GroupLossConstraint
from worker.spec.models import PointRisk, Spec
from worker.spec.rates import SIDES, RateConstraint, RateObjective, RateSum, RateTerm
from worker.spec.validation import ValidationData


def reportable(spec: Spec) -> bool:
    """Whether :func:`solve_report` covers the spec (module docstring)."""
    objective = spec.objective
    return isinstance(objective, RateObjective) or isinstance(objective, PointRisk) and \
        (objective.loss in LOSSES or objective.loss == SOFTMAX_CROSS_ENTROPY)


def solve_report(spec: Spec, features: sp.csr_matrix, labels: np.ndarray, source: DataSource,
                 deployed: dict[str, Deployed], tolerance: float,
                 weights: np.ndarray | None = None) -> Report:
    """The report of a solved ``spec`` (:func:`reportable`) on its training rows
    ``features`` (n, d) with ``labels`` (n,) as the loss takes them (the compiled
    problem's; a rate objective's: all its examples, +-1 labels or None), each weighing
    ``weights`` (n,) (the compiled objective's; None: 1) and, with ``validation``, the
    held-out rows; ``deployed`` maps names of :data:`MODEL_NAMES` to points; bootstrap
    seeded with ``solver.seed``."""
    classes, multiclass = _label_kinds(spec, labels is not None)
    training = Examples(features, labels, classes,
                        _groups(spec.objective.data.groups, source, "objective.data.groups",
                                features.shape[0]), multiclass, weights)
    return _report(spec, source, deployed, tolerance, features.shape[1], weights is not None,
                   classes,
                   lambda definition: _data_report(definition, training, deployed, tolerance))


#: Counts of the deployed points on the training rows, taken elsewhere (partitions): called
#: with the objective's loss, the rate terms counted on the rows and whether the labels are
#: +-1 classes; returns each point's added :class:`~worker.report.counts.Counts`.
CountTraining = Callable[[str | None, list[Term], bool], dict[str, Counts]]


def counted_report(spec: Spec, source: DataSource, deployed: dict[str, Deployed],
                   tolerance: float, d: int, weighted: bool, count: CountTraining) -> Report:
    """:func:`solve_report` of labelled training rows of width ``d`` that this process does
    not hold: their section from the points' counts ``count`` adds up where the rows are
    (the validation section and the linear rows as there). The rows' own rate constraints
    only: rates with examples of their own and group losses never leave this process."""
    classes, _ = _label_kinds(spec, True)

    def training(definition: Definition) -> DataReport:
        assert not definition.group_losses and all(own is None for *_, own in definition.rates)
        counts = count(definition.loss, counted_terms(definition), classes)
        return DataReport(examples=next(iter(counts.values())).examples, models={
            name: finished(definition, counts[name], deployed[name], tolerance)
            for name in MODEL_NAMES if name in deployed})

    return _report(spec, source, deployed, tolerance, d, weighted, classes, training)


def _label_kinds(spec: Spec, labelled: bool) -> tuple[bool, bool]:
    """(the training labels are +-1 classes, they are class indices of K scores)."""
    loss = getattr(spec.objective, "loss", None)       # None: a rate objective
    multiclass = loss == SOFTMAX_CROSS_ENTROPY
    return labelled and not multiclass and (loss is None or LOSSES[loss].labels is CLASSES), \
        multiclass


def _report(spec: Spec, source: DataSource, deployed: dict[str, Deployed], tolerance: float,
            d: int, weighted: bool, classes: bool,
            training: Callable[[Definition], DataReport]) -> Report:
    """The report with its ``training`` section (of the definition) and, with
    ``validation``, the held-out rows' (read here; +-1 labels with ``classes``, as the
    training rows')."""
    objective = _objective_definition(spec.objective, weighted)
    definition = _definition(spec, d, source)
    validation = _validation(spec, source, d, classes)
    bootstrap = Bootstrap(resamples=RESAMPLES, seed=spec.solver.seed, level=LEVEL)
    return Report(tolerance=tolerance, objective=objective, bootstrap=bootstrap,
                  training=training(definition),
                  validation=None if validation is None else _data_report(
                      definition, validation, deployed, tolerance, bootstrap, own_data=False))


def report_on(report: Report, examples: Examples, deployed: dict[str, Deployed],
              tolerance: float) -> Report:
    """``report`` recomputed on other ``examples`` (its ``validation``, with intervals):
    rates and the objective from the definitions the report carries; linear rows do not
    depend on data, so their training values are kept."""
    definition = _base_definition(report.objective)
    any_model = next(iter(report.training.models.values()))
    for constraint in any_model.constraints:
        if constraint.type == "rate":
            definition.rates.append((constraint.index, _rate_constraint(constraint), None))
        elif constraint.type == "group_loss":
            definition.group_losses.append((constraint.index, GroupLossConstraint(
                type="group_loss", group=constraint.group, loss=constraint.loss,
                rhs=constraint.bound), None))
    validation = _data_report(definition, examples, deployed, tolerance, report.bootstrap,
                              own_data=False)
    for name, model in validation.models.items():
        rows = [c for c in report.training.models[name].constraints
                if c.type not in ("rate", "group_loss")]
        model.constraints = sorted(model.constraints + rows, key=lambda c: c.index)
        worst = [c.worst for c in model.constraints if c.worst is not None]
        model.max_violation = max(0.0, max(worst, default=0.0))
    return report.model_copy(update={"tolerance": tolerance, "validation": validation})


def _data_report(definition: Definition, examples: Examples, deployed: dict[str, Deployed],
                 tolerance: float, bootstrap: Bootstrap | None = None, *,
                 own_data: bool = True) -> DataReport:
    pending: Pending = []
    models = {name: model_report(definition, examples, deployed[name], tolerance,
                                 own_data=own_data,
                                 pending=None if bootstrap is None else pending)
              for name in MODEL_NAMES if name in deployed}
    if bootstrap is not None:
        add_intervals(pending, bootstrap.resamples, bootstrap.seed)
    return DataReport(examples=examples.n, models=models)


def _objective_definition(objective: PointRisk | RateObjective,
                          weighted: bool) -> ObjectiveDefinition:
    """What the report says of the objective: a loss and regularizer, or a rate."""
    if isinstance(objective, RateObjective):
        return ObjectiveDefinition(metric=objective.metric, group=objective.group,
                                   weighted=weighted)
    return ObjectiveDefinition(loss=objective.loss, l1=objective.l1, l2=objective.l2,
                               weighted=weighted)


def _base_definition(objective: ObjectiveDefinition) -> Definition:
    """A Definition of the objective alone (its loss, or its rate)."""
    rate = None if objective.metric is None else \
        RateTerm(metric=objective.metric, group=objective.group)  # type: ignore[arg-type]
    return Definition(objective.loss, objective.l1, objective.l2, rate=rate)


def _definition(spec: Spec, d: int, source: DataSource) -> Definition:
    """The objective, each linear-row block compiled again on its own, each rate constraint
    (with its own examples read, if it has them)."""
    objective = spec.objective
    assert isinstance(objective, PointRisk | RateObjective)
    definition = _base_definition(_objective_definition(objective, False))
    for k, constraint in enumerate(spec.constraints):
        path = f"constraints[{k}]"
        if isinstance(constraint, RateConstraint):
            own = None if constraint.data is None else _own_examples(constraint, source, path)
            definition.rates.append((k, constraint, own))
        elif isinstance(constraint, GroupLossConstraint):
            own = None if constraint.data is None else \
                _group_loss_examples(constraint, source, path)
            definition.group_losses.append((k, constraint, own))
        elif (record := CONSTRAINT_TYPES[constraint.type]).form == ROWS:
            rows = record.rows(constraint, path, d, source, [])
            definition.blocks.append((k, constraint.type, rows.matrix, rows.rhs))
    return definition


def _own_examples(constraint: RateConstraint, source: DataSource, path: str) -> Examples:
    data = constraint.data
    assert data is not None
    if data.labels is None:
        features, labels = source.matrix(data.features, f"{path}.data.features"), None
    else:
        features, labels = source.examples(data.features, data.labels, f"{path}.data")
        labels = checked_labels(labels, CLASSES, f"{path}.data.labels", f"{path}.data.labels")
    features = as_csr(features)
    n = features.shape[0]
    return Examples(features, labels, labels is not None,
                    _groups(data.groups, source, f"{path}.data.groups", n),
                    weights=example_weights(data.weights, n, f"{path}.data.weights", source))


def _group_loss_examples(constraint: GroupLossConstraint, source: DataSource,
                         path: str) -> Examples:
    """A group loss's own examples, labels as its loss takes them."""
    data = constraint.data
    assert data is not None
    features, labels = source.examples(data.features, data.labels, f"{path}.data")
    rule = LOSSES[constraint.loss].labels
    labels = checked_labels(labels, rule, f"{path}.data", f"{path}.data.labels")
    features = as_csr(features)
    n = features.shape[0]
    return Examples(features, labels, rule is CLASSES,
                    _groups(data.groups, source, f"{path}.data.groups", n),
                    weights=example_weights(data.weights, n, f"{path}.data.weights", source))


def _validation(spec: Spec, source: DataSource, d: int, classes: bool) -> Examples | None:
    """The held-out examples: ``validation``'s data, or the rows a split source held out."""
    loss = getattr(spec.objective, "loss", None)       # None: a rate objective
    multiclass = loss == SOFTMAX_CROSS_ENTROPY
    if isinstance(source, SplitSource):
        held = source.held_out
        if "labels" not in held:
            raise SpecError.at("validation.fraction", "the objective's data have no labels "
                               "to hold out with its rows; give validation data instead")
        labels = report_labels(loss, np.asarray(held["labels"]), "objective.data", LABELS)
        groups = {key.removeprefix("groups."): np.asarray(value) != 0
                  for key, value in held.items() if key.startswith("groups.")}
        weights = held.get("weights")
        if weights is not None and not np.sum(weights) > 0:
            raise SpecError.at("validation.seed", "every held-out row weighs 0 in "
                               "objective.data.weights, so the held-out report is undefined; "
                               "choose another seed or a larger fraction")
        return Examples(as_csr(held["features"]), labels, classes, groups, multiclass,
                        None if weights is None else np.asarray(weights))
    validation = spec.validation
    if not isinstance(validation, ValidationData):
        return None
    features, labels = source.examples(validation.features, validation.labels, "validation")
    features = as_csr(features)
    if features.shape[1] != d:
        raise SpecError.at("validation.features", f"{features.shape[1]} columns; the "
                           f"objective's data have {d}")
    if labels.shape[0] != features.shape[0]:
        raise SpecError.at("validation.labels", f"{labels.shape[0]} labels for "
                           f"{features.shape[0]} rows; give one label per row")
    labels = report_labels(loss, labels, "validation", "validation.labels")
    return Examples(features, labels, classes,
                    _groups(validation.groups, source, "validation.groups",
                            features.shape[0]), multiclass)


def report_labels(loss: str | None, labels: np.ndarray, path: str,
                  labels_path: str) -> np.ndarray:
    """Labels (n,) as the report takes them: by the loss's rule (None, a rate objective:
    +-1 class labels), or for ``softmax_cross_entropy`` class indices (non-negative
    integers; one beyond the model's classes counts as an error)."""
    if loss is None:
        return checked_labels(labels, CLASSES, path, labels_path)
    if loss != SOFTMAX_CROSS_ENTROPY:
        return checked_labels(labels, label_kind(loss), path, labels_path)
    bad = np.flatnonzero(~np.isfinite(labels) | (labels < 0) | (labels != np.round(labels)))
    if bad.size:
        i = int(bad[0])
        raise SpecError.at(f"{labels_path}[{i}]", f"{float(labels[i])!r} is not a class "
                           "index; give integers 0..K-1")
    return labels.astype(np.float64)


def _groups(values: dict[str, Any] | None, source: DataSource, path: str,
            n: int) -> dict[str, np.ndarray]:
    """Group name -> rows (bool, (n,)), read and checked as the compiler does."""
    return group_masks(group_rows(values, n, path, source), n)


def _rate_constraint(report: ConstraintReport) -> RateConstraint:
    """The rate constraint a report row describes (its terms by side, ``op`` and each side's
    constant; a row without sides has its first term on the left, the others on the right)."""
    sides = {name: [] for name in SIDES}
    for k, t in enumerate(report.terms):
        sides[t.side or ("lhs" if k == 0 else "rhs")].append(
            RateTerm(metric=t.metric, group=t.group, scale=t.scale))  # type: ignore[arg-type]
    constants = {"lhs": report.lhs_constant,
                 "rhs": report.rhs_constant if report.bound is None else report.bound}

    def side(name: str) -> Any:
        terms, constant = sides[name], constants[name]
        if not terms:
            return constant
        return terms[0] if len(terms) == 1 and constant == 0 else \
            RateSum(terms=terms, constant=constant)

    return RateConstraint(type="rate", lhs=side("lhs"), op=report.op,  # type: ignore[arg-type]
                          rhs=side("rhs"))
