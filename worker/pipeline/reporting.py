"""The pipeline's side of the report (:mod:`worker.report`): the data source that holds out
``validation.fraction`` of the rows, and the report of a solved problem for its Result."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from worker.errors import SpecError
from worker.losses import LOSSES
from worker.model_types import MODEL_TYPES
from worker.pipeline.report_parts import PartitionedTraining
from worker.problem.compile import DataSource
from worker.problem.compiled import CompiledProblem
from worker.problem.network import NetworkProblem
from worker.report.build import reportable, solve_report
from worker.report.metrics import Deployed
from worker.report.schema import Report
from worker.report.split import SplitSource
from worker.result import Result
from worker.settings import DataSettings
from worker.spec.models import Spec
from worker.spec.validation import ValidationSplit
from worker.stats import Stats

#: The losses a report covers, for the note of a spec it cannot report on.
_LOSS_LIST = f"{', '.join([*LOSSES][:-1])} and {[*LOSSES][-1]}"

#: Why a held-out share cannot be taken from partitioned data.
PARTITIONED = ("a share of rows cannot be held out of data read in partitions; give "
               "validation data (features, labels, groups) instead")


def data_source(spec: Spec, roots: Sequence[Path], settings: DataSettings) -> DataSource:
    """Where the spec's data are read (under ``roots`` and ``settings``): with
    ``validation.fraction``, a :class:`SplitSource`."""
    validation = spec.validation
    if isinstance(validation, ValidationSplit):
        return SplitSource(roots, validation.fraction, validation.seed, settings)
    return DataSource(roots, settings)


def refuse_split(spec: Spec) -> None:
    """Partitioned data: a held-out share is refused (:data:`PARTITIONED`)."""
    if isinstance(spec.validation, ValidationSplit):
        raise SpecError.at("validation.fraction", PARTITIONED)


def deployed_points(result: Result) -> dict[str, Deployed]:
    """The Result's points a report describes: the mixture (when its members carry their
    solutions), the mean, the projection and the deterministic model."""
    model = result.model
    network = None if model is None else MODEL_TYPES[model.type].deploy(model).network
    points: dict[str, Deployed] = {}
    if result.mixture and all(m.solution is not None for m in result.mixture):
        points["mixture"] = Deployed(np.array([m.solution for m in result.mixture]),
                                     np.array([m.weight for m in result.mixture]), network)
    points["mean"] = Deployed.point(result.mean.solution, network)
    if result.projected is not None:
        points["projected"] = Deployed.point(result.projected.solution, network)
    if result.deterministic is not None and result.deterministic.solution is not None:
        points["deterministic"] = Deployed.point(result.deterministic.solution, network)
    return points


@dataclass(frozen=True)
class ReportStats(Stats):
    """The report stage's record (:mod:`worker.stats`): its seconds."""

    report_s: float


@dataclass(frozen=True)
class Reported:
    """What the report stage adds to a Result: its report (None: none), the notes saying
    why there is none, and the stage's record (None: it did not run)."""

    report: Report | None = None
    notes: tuple[str, ...] = ()
    stats: ReportStats | None = None


def report_result(spec: Spec, problem: CompiledProblem | NetworkProblem, source: DataSource,
                  result: Result, partitions: PartitionedTraining | None = None) -> Reported:
    """The report of ``result`` and the stage's record where :func:`reportable`; else the
    note saying why there is none (when the spec asks for validation). With ``partitions``
    (the examples left there), the training section is a map-reduce over them."""
    if not reportable(spec):
        if spec.validation is None:
            return Reported()
        return Reported(notes=("validation: no report for this objective (reports cover "
                               f"one empirical risk on the {_LOSS_LIST} losses, or a rate)",))
    began = time.perf_counter()
    deployed, tolerance = deployed_points(result), spec.solver.tolerance
    if partitions is not None:
        report = partitions.report(spec, source, deployed, tolerance)
        return Reported(report, stats=ReportStats(time.perf_counter() - began))
    if isinstance(problem, NetworkProblem):
        term = problem.terms[0]
        features, labels, weights = term.features, term.labels, term.weights
    elif problem.true_rate is not None:            # every example of a rate objective
        rate = problem.true_rate
        features, labels, weights = rate.rate.features, rate.labels, rate.weights
    else:
        objective = problem.objective
        features, labels, weights = objective.features, objective.labels, objective.weights
    report = solve_report(spec, features, labels, source, deployed, tolerance, weights)
    return Reported(report, stats=ReportStats(time.perf_counter() - began))
