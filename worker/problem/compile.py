"""Spec → :class:`~worker.problem.compiled.CompiledProblem`: read the data, check it against the
dimension, and compile every constraint block by its type's record in
:data:`~worker.problem.constraint_types.CONSTRAINT_TYPES` (linear types into unit-norm rows of
one CSR matrix, rates into one rate set).

Errors are :class:`~worker.errors.SpecError` / :class:`~worker.errors.DataError` whose text
starts with the JSON path, e.g. ``constraints[2].pairs[5]: index 9000 is out of range for
dimension 4096``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from worker.blas import one_blas_thread
from worker.data.labels import LABELS, checked_labels, label_kind
from worker.data.read import LoadStats, read_examples, read_matrix, read_vector
from worker.errors import SpecError
from worker.losses import PAIRWISE_BASE, PAIRWISE_HINGE
from worker.problem.compiled import LOSS_CODES, QUADRATIC, CompiledProblem, ConstraintSet, Objective
from worker.problem.constraint_types import CONSTRAINT_TYPES, RATES, ROWS
from worker.problem.csr import as_csr
from worker.problem.rate_objective import PROXY_LOSS, compile_rate_objective
from worker.problem.rates import RateSet, TrueRate
from worker.problem.weights import example_weights, mean_one
from worker.settings import DataSettings
from worker.spec.models import EmpiricalRisk, Quadratic, RateObjective, Spec


class DataSource:
    """Reads a spec's data references under one set of roots and data settings (resolved by
    the caller, :func:`worker.pipeline.solve.solve`), summing what loading cost."""

    def __init__(self, roots: Sequence[Path], settings: DataSettings,
                 stats: LoadStats | None = None):
        self.roots = roots
        self.settings = settings
        self.stats = stats if stats is not None else LoadStats()

    def matrix(self, value, path: str):
        """A matrix (dense or CSR) from an inline value or a data reference."""
        return read_matrix(value, path, roots=self.roots, settings=self.settings,
                           stats=self.stats)

    def vector(self, value, path: str, allow_infinite: bool = False) -> np.ndarray:
        """A 1-D float64 vector."""
        return read_vector(value, path, roots=self.roots, allow_infinite=allow_infinite,
                           settings=self.settings, stats=self.stats)

    def examples(self, features, labels, path: str):
        """Features and labels; labels may come from the features file."""
        return read_examples(features, labels, path, roots=self.roots, settings=self.settings,
                             stats=self.stats)


def compile_problem(spec: Spec, source: DataSource, width_elsewhere: int | None = None,
                    rates_elsewhere: RateSet | None = None,
                    true_rate_elsewhere: TrueRate | None = None) -> CompiledProblem:
    """Read the spec's data (file:// only under the data roots) and build the problem.

    ``source`` reads the data (its roots and settings resolved by the caller).
    ``width_elsewhere`` is the examples' width when they stay in partitions this process
    does not hold (:mod:`worker.distributed.partitions`): the objective's data are then not
    read and it has no rows, its rate constraints are ``rates_elsewhere`` and a rate
    objective's true rate ``true_rate_elsewhere`` (what stands for a RateSet and a
    TrueRate there, :mod:`worker.distributed.rate_parts`).
    """
    true_rate = true_rate_elsewhere
    if isinstance(spec.objective, RateObjective) and width_elsewhere is None:
        objective, true_rate = compile_rate_objective(spec.objective, source)
        objective_d = objective.features.shape[1]
    else:
        objective, objective_d = _objective(spec, source) if width_elsewhere is None \
            else _rowless(spec, width_elsewhere)
    d = _dimension(spec, objective_d)
    objective = _fit_objective(objective, d)
    lower, upper = box_bounds(spec, d, source)
    notes: list[str] = []
    return CompiledProblem(objective=objective,
                           constraints=_constraint_rows(spec, d, source, notes),
                           lower=lower, upper=upper, notes=notes,
                           rates=_rates(spec, objective, source, d, true_rate)
                           if width_elsewhere is None else rates_elsewhere,
                           true_rate=true_rate)


def _constraint_rows(spec: Spec, d: int, source, notes: list[str]) -> ConstraintSet:
    """Every block of a :data:`ROWS` type compiled by its record, stacked in spec order."""
    return ConstraintSet.stacked([
        record.rows(constraint, f"constraints[{k}]", d, source, notes)
        for k, constraint in enumerate(spec.constraints)
        if (record := CONSTRAINT_TYPES[constraint.type]).form == ROWS], d)


def _rates(spec: Spec, objective: Objective, source, d: int,
           true_rate: TrueRate | None) -> RateSet | None:
    """The problem's one rate set, from the one :data:`RATES` type's record (with a rate
    objective, ``true_rate``, on whose examples the constraints without data count)."""
    (record,) = [record for record in CONSTRAINT_TYPES.values() if record.form == RATES]
    return record.compile(spec, objective, source, d, true_rate)


def _objective(spec: Spec, source) -> tuple[Objective, int | None]:
    """The objective with data read; its own width (d) when the data fix it."""
    obj = spec.objective
    if isinstance(obj, Quadratic):
        q = as_csr(source.matrix(obj.Q, "objective.Q"))
        if q.shape[0] != q.shape[1]:
            raise SpecError.at("objective.Q", f"Q must be square, got shape {q.shape}")
        d = q.shape[0]
        c = np.zeros(d) if obj.c is None else source.vector(obj.c, "objective.c")
        if c.shape[0] != d:
            raise SpecError.at("objective.c", f"length {c.shape[0]} does not match Q's {d}")
        _check_psd(q)
        return Objective(QUADRATIC, sp.csr_matrix((0, d)), np.zeros(0), q, c, obj.l2,
                         obj.l1), d
    assert isinstance(obj, EmpiricalRisk)
    if obj.loss == PAIRWISE_HINGE:
        return _pairwise_objective(obj, source)
    features, labels = risk_examples(obj, "objective", source)
    labels = _check_labels(obj.loss, labels)
    weights = example_weights(obj.data.weights, features.shape[0], "objective.data.weights",
                              source)
    objective = Objective(LOSS_CODES[obj.loss], features, labels,
                          sp.csr_matrix((0, 0)), np.zeros(0), obj.l2, obj.l1, mean_one(weights))
    return objective, features.shape[1]


def risk_examples(risk: EmpiricalRisk, path: str, source: DataSource):
    """The examples of an empirical risk at JSON ``path``: CSR features (n, d), n >= 1, and
    one unchecked label per row (n,)."""
    features, labels = source.examples(risk.data.features, risk.data.labels, f"{path}.data")
    features = as_csr(features)
    if labels.shape[0] != features.shape[0]:
        raise SpecError.at(f"{path}.data.labels", f"{labels.shape[0]} labels for "
                           f"{features.shape[0]} feature rows; give one label per row")
    if features.shape[0] == 0:
        raise SpecError.at(f"{path}.data.features", "no examples; give at least one row")
    return features, labels


def _rowless(spec: Spec, width: int) -> tuple[Objective, int]:
    """An empirical-risk objective whose examples are elsewhere: no rows, its loss and terms
    (the partitions, pointwise examples' or pairs', hold their weights:
    :mod:`worker.distributed.weights`); a rate objective's hinge proxy, whose rows each game
    round brings (:mod:`worker.algorithms.run.game_rounds`)."""
    obj = spec.objective
    if isinstance(obj, RateObjective):
        return Objective(LOSS_CODES[PROXY_LOSS], sp.csr_matrix((0, width)), np.zeros(0),
                         sp.csr_matrix((0, 0)), np.zeros(0)), width
    assert isinstance(obj, EmpiricalRisk)
    code = PAIRWISE_BASE.code if obj.loss == PAIRWISE_HINGE else LOSS_CODES[obj.loss]
    return Objective(code, sp.csr_matrix((0, width)), np.zeros(0),
                     sp.csr_matrix((0, 0)), np.zeros(0), obj.l2, obj.l1), width


def _pairwise_objective(obj: EmpiricalRisk, source) -> tuple[Objective, int]:
    """pairwise_hinge is its base loss (hinge) with label 1 on the rows x+ - x-."""
    positive = as_csr(source.matrix(obj.data.positive, "objective.data.positive"))
    negative = as_csr(source.matrix(obj.data.negative, "objective.data.negative"))
    if positive.shape != negative.shape:
        raise SpecError.at("objective.data.negative", f"shape {negative.shape} differs from "
                           f"data.positive's {positive.shape}; pairs need equal shapes")
    if positive.shape[0] == 0:
        raise SpecError.at("objective.data.positive", "no pairs; give at least one row")
    difference = as_csr(positive - negative)
    difference.eliminate_zeros()
    ones = np.ones(difference.shape[0])
    weights = example_weights(obj.data.weights, difference.shape[0], "objective.data.weights",
                              source)
    return Objective(PAIRWISE_BASE.code, difference, ones, sp.csr_matrix((0, 0)), np.zeros(0),
                     obj.l2, obj.l1, mean_one(weights)), difference.shape[1]


def _check_labels(loss: str, labels: np.ndarray) -> np.ndarray:
    return checked_labels(labels, label_kind(loss), LABELS)


def _check_psd(q: sp.csr_matrix) -> None:
    asymmetry = abs(q - q.T).max() if q.nnz else 0.0
    scale = max(abs(q).max() if q.nnz else 0.0, 1.0)
    if asymmetry > 1e-10 * scale:
        raise SpecError.at("objective.Q", f"Q is not symmetric (max |Q - Q'| = {asymmetry:.3g});"
                           " give (Q + Q')/2")
    if q.shape[0] <= 2000:
        with one_blas_thread():   # worker.blas
            smallest = float(np.linalg.eigvalsh(q.toarray())[0]) if q.shape[0] else 0.0
        if smallest < -1e-9 * scale:
            raise SpecError.at("objective.Q", f"Q is not positive semidefinite (smallest "
                               f"eigenvalue {smallest:.3g}); the objective must be convex")


def _dimension(spec: Spec, objective_d: int | None) -> int:
    """d from ``dimension`` or the objective's data; both given must agree."""
    if spec.dimension is not None and objective_d is not None and objective_d != spec.dimension:
        where = "objective.Q" if isinstance(spec.objective, Quadratic) else "objective.data"
        raise SpecError.at(where, f"data have {objective_d} columns but dimension is "
                           f"{spec.dimension}")
    d = spec.dimension if spec.dimension is not None else objective_d
    if not d:
        raise SpecError.at("dimension", "cannot tell the dimension; set 'dimension'")
    return int(d)


def _fit_objective(objective: Objective, d: int) -> Objective:
    if objective.kind == QUADRATIC:
        return objective
    return Objective(objective.kind, objective.features, objective.labels,
                     sp.csr_matrix((d, d)), np.zeros(d), objective.l2, objective.l1,
                     objective.weights)


def _bound(value, path: str, d: int, default: float, source) -> np.ndarray:
    if value is None:
        return np.full(d, default)
    if isinstance(value, int | float):
        if math.isnan(value):
            raise SpecError.at(path, "NaN is not a bound; omit it for no bound")
        return np.full(d, float(value))
    vector = source.vector(value, path, allow_infinite=True)
    if vector.shape[0] != d:
        raise SpecError.at(path, f"length {vector.shape[0]} does not match dimension {d}")
    return vector


def box_bounds(spec: Spec, d: int, source) -> tuple[np.ndarray, np.ndarray]:
    """``bounds.lower`` and ``bounds.upper`` as vectors of length d (the parameters)."""
    lower = _bound(spec.bounds.lower, "bounds.lower", d, -np.inf, source)
    upper = _bound(spec.bounds.upper, "bounds.upper", d, np.inf, source)
    crossed = np.flatnonzero(lower > upper)
    if crossed.size:
        j = int(crossed[0])
        raise SpecError.at(f"bounds.lower[{j}]" if spec.bounds.lower is not None and not
                           isinstance(spec.bounds.lower, int | float) else "bounds",
                           f"lower {lower[j]} > upper {upper[j]} at coordinate {j}; "
                           "W would be empty")
    return lower, upper
