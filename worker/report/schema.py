"""The Result's ``report`` (docs/results.md "The report"): plain pydantic models, imported by
:mod:`worker.result` and filled by :mod:`worker.report.build`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

#: The deployed points a report describes, in the order it lists them.
MODEL_NAMES = ("mixture", "mean", "projected", "deterministic")


class ReportModel(BaseModel):
    """Base: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


class RateReport(ReportModel):
    """One rate term: ``scale`` times ``metric`` on ``group`` (null: every example), on the
    constraint's ``side`` (null in reports written before sides: the first term is the
    left side, any other the right).

    ``examples``: the rows the rate counts (the group, and for label-conditional metrics
    only its rows of that label); ``group_size``: the group's rows; ``value``: the rate,
    weighted by the examples' weights when they have them (null when ``examples`` is 0, or
    for a ratio metric when its denominator is); ``interval``: its 95% bootstrap interval
    (validation data only, means only).
    """

    side: Literal["lhs", "rhs"] | None = None
    metric: str
    group: str | None
    scale: float
    examples: int
    group_size: int
    value: float | None
    interval: list[float] | None = None


class ConstraintReport(ReportModel):
    """``constraints[index]``: g = (its rows, or lhs - rhs of a rate) <= 0.

    ``rows``: its constraints (a rate: 1); ``violated``: how many have g > the report's
    tolerance; ``worst``: the largest g (linear rows are unit-norm, as the solver sees them;
    null when a rate is undefined on these data). A rate also lists its terms, ``op``,
    ``bound`` (the number on its right, null when the right has a rate term), each side's
    constant (``lhs_constant``, ``rhs_constant``: the side itself when it is a number) and
    value (``lhs``, ``rhs``: its terms' scaled rates plus its constant), and
    ``difference`` = lhs - rhs (null when a rate is undefined). A group loss
    (``type: "group_loss"``) gives its ``loss`` and ``group`` (null: every example),
    ``examples`` (the group's rows), ``lhs`` its mean loss, ``rhs`` = ``bound`` and
    ``difference`` = ``worst`` = lhs - rhs.
    """

    index: int
    type: str
    rows: int
    violated: int
    worst: float | None
    op: Literal["<=", ">="] | None = None
    bound: float | None = None
    terms: list[RateReport] = []
    lhs_constant: float = 0.0
    rhs_constant: float = 0.0
    lhs: float | None = None
    rhs: float | None = None
    difference: float | None = None
    loss: str | None = None
    group: str | None = None
    examples: int | None = None


class ModelReport(ReportModel):
    """One deployed point on one data set: the objective (loss mean plus regularizer), the
    classification error (class labels only), and every constraint."""

    objective: float | None
    error: float | None
    max_violation: float
    constraints: list[ConstraintReport]


class DataReport(ReportModel):
    """Every deployed point (:data:`MODEL_NAMES` present in the Result) on ``examples`` rows."""

    examples: int
    models: dict[str, ModelReport]


class Bootstrap(ReportModel):
    """How the rates' intervals were drawn: percentile intervals at ``level`` from
    ``resamples`` resamples of the rows with replacement, numpy's PCG64 seeded with ``seed``."""

    resamples: int
    seed: int
    level: float


class ObjectiveDefinition(ReportModel):
    """The objective, so a report can be recomputed on other data: an empirical risk's
    ``loss`` and regularizer, or a rate objective's ``metric`` on ``group`` (null: every
    example; ``loss`` null, and the models' ``objective`` is the true rate); ``weighted``: the
    training data's objective, error and rates counted on them weigh each example by
    ``objective.data.weights`` (other data weigh every row alike)."""

    loss: str | None = None
    l1: float = 0.0
    l2: float = 0.0
    metric: str | None = None
    group: str | None = None
    weighted: bool = False


class Report(ReportModel):
    """The report: ``training`` and (with ``validation`` in the spec) ``validation``."""

    tolerance: float
    objective: ObjectiveDefinition
    bootstrap: Bootstrap
    training: DataReport
    validation: DataReport | None = None
