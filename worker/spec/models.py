"""Problem spec v1 (README "Problem spec") as pydantic models, and :func:`parse_spec`.

Unknown fields are rejected everywhere. Checks that need the problem's dimension (index
ranges, shapes) happen when the spec is compiled (:mod:`worker.problem.compile`), with the same
``path: what is wrong; what to do`` messages.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from worker.data.refs import MAX_SIZE, MatrixValue, VectorValue
from worker.errors import SpecError
from worker.losses import LOSS_NAMES, PAIRWISE_HINGE, SOFTMAX_CROSS_ENTROPY
from worker.spec.group_loss import GroupLossConstraint
from worker.spec.issues import readable_issues, validator_name
from worker.spec.locations import union_tags
from worker.spec.model_types import LinearModel, Model
from worker.spec.rates import RATE_METRICS as RATE_METRICS
from worker.spec.rates import SIDE_TAGS
from worker.spec.rates import RateConstraint as RateConstraint
from worker.spec.rates import RateData as RateData
from worker.spec.rates import RateObjective as RateObjective
from worker.spec.rates import RateSum as RateSum
from worker.spec.rates import RateTerm as RateTerm
from worker.spec.solver import ALGORITHMS as ALGORITHMS
from worker.spec.solver import NETWORK_ALGORITHMS, Output, Solver
from worker.spec.solver import Game as Game
from worker.spec.strict import MAX_ITERATIONS as MAX_ITERATIONS
from worker.spec.strict import MAX_SCALE as MAX_SCALE
from worker.spec.strict import CoordinateIndex, Count, StrictModel, Weight, refusing
from worker.spec.sweep import Sweep
from worker.spec.tables import (
    TableData,
    check_table_spec,
)
from worker.spec.validation import Validation

#: The most classes of a multiclass loss and terms of a robust objective (memory is bounded
#: by the job budget besides).
MAX_CLASSES = 10_000
MAX_TERMS = 256

class Bounds(StrictModel):
    """The simple domain W = [lower, upper]: scalars, per-coordinate arrays or data refs."""

    lower: float | VectorValue | None = None
    upper: float | VectorValue | None = None


class ExampleData(StrictModel):
    """Examples: ``features`` and ``labels`` (omitted when the features file carries them).

    ``groups`` names subsets of the examples (0/1 vectors, one entry per row) for rate
    constraints; ``weights`` gives each example a finite weight >= 0 (fractional allowed,
    not all 0): the loss is then sum_i c_i loss_i / sum_i c_i, and the rates counted on
    these examples are weighted alike.
    """

    _not_pairs = refusing("positive", "negative", because="data.positive/negative are only "
                           "for loss 'pairwise_hinge'; this loss takes data.features (and "
                           "data.labels)")

    features: MatrixValue
    labels: VectorValue | None = None
    groups: dict[str, VectorValue] | None = None
    weights: VectorValue | None = None


def _no_column_group(raw: Any) -> Any:
    """Refuse a group by column (``column`` or ``all_of``) among pairs' 0/1 vectors."""
    if isinstance(raw, dict) and ("column" in raw or "all_of" in raw):
        raise ValueError("column groups are not available for pairwise data "
                         "(data.positive, data.negative): a group here is a 0/1 vector with "
                         "one entry per pair, and rate constraints do not count on pairs; "
                         "drop the group")
    return raw


class PairData(StrictModel):
    """Pairs of examples for pairwise_hinge: row i of ``positive`` should outscore row i of
    ``negative``; ``weights``: one finite weight >= 0 per pair (the mean loss weighted
    alike)."""

    positive: MatrixValue
    negative: MatrixValue
    groups: dict[str, Annotated[VectorValue, BeforeValidator(_no_column_group)]] | None = None
    weights: VectorValue | None = None

    _not_examples = refusing("features", "labels", because="pairwise_hinge takes "
                              "data.positive and data.negative (rows x+ and x- of each pair), "
                              "not features/labels")


class EmpiricalRisk(StrictModel):
    """Mean loss over examples plus l1 ||w||_1 + (l2/2)||w||^2: :class:`PointRisk` or
    :class:`PairRisk`, told apart by ``loss``."""

    type: Literal["empirical_risk"]
    l1: Weight = 0.0
    l2: Weight = 0.0


def _point_data_kind(raw: Any) -> str:
    """``table_data`` for a table (it has ``table``), else ``example_data`` (which reports
    what is wrong with anything else)."""
    table = ("table" in raw) if isinstance(raw, dict) else isinstance(raw, TableData)
    return "table_data" if table else "example_data"


#: A point risk's data: a feature matrix, or a calibrated model's table (:mod:`.tables`).
PointData = Annotated[Annotated[ExampleData, Tag("example_data")]
                      | Annotated[TableData, Tag("table_data")],
                      Discriminator(_point_data_kind)]


class PointRisk(EmpiricalRisk):
    """A loss on each example's score (or K scores for softmax_cross_entropy)."""

    loss: Literal[tuple(name for name in LOSS_NAMES  # type: ignore[valid-type]
                        if name != PAIRWISE_HINGE)]
    data: PointData
    #: K of softmax_cross_entropy (labels 0..K-1); null: the largest label + 1
    classes: Annotated[int, Field(ge=2, le=MAX_CLASSES)] | None = None

    @field_validator("loss", mode="before")
    @classmethod
    def _known_loss(cls, loss: Any) -> Any:
        if isinstance(loss, str) and loss not in LOSS_NAMES:
            raise ValueError(f"unknown loss {loss!r}; one of {', '.join(LOSS_NAMES)}")
        return loss

    @model_validator(mode="after")
    def _classes_fit_loss(self) -> PointRisk:
        if self.classes is not None and self.loss != SOFTMAX_CROSS_ENTROPY:
            raise ValueError(f"classes is the K of softmax_cross_entropy; loss {self.loss!r} "
                             "scores one output (omit classes)")
        return self


class PairRisk(EmpiricalRisk):
    """pairwise_hinge: max(0, 1 - (x+ . w - x- . w)) averaged over pairs."""

    loss: Literal[PAIRWISE_HINGE]  # type: ignore[valid-type]
    data: PairData


def _objective_kind(raw: Any) -> str | None:
    """The member of :data:`Objective` or :data:`Risk` a raw value is: its ``type``, and for
    an empirical risk its loss family."""
    if isinstance(raw, dict):
        kind, loss = raw.get("type"), raw.get("loss")
    else:
        kind, loss = getattr(raw, "type", None), getattr(raw, "loss", None)
    if kind != "empirical_risk":
        return kind if isinstance(kind, str) else None
    return "pair_risk" if loss == PAIRWISE_HINGE else "point_risk"


_KIND_ERROR = ("objective kind", "type must be one of 'empirical_risk', 'quadratic', 'max_of', "
               "'rate' (max_of terms: 'empirical_risk')")

#: An empirical risk, its data told by its loss family: one schema per family, so client
#: generators read the rule on which data each loss takes.
Risk = Annotated[Annotated[PointRisk, Tag("point_risk")] | Annotated[PairRisk, Tag("pair_risk")],
                 Discriminator(_objective_kind, custom_error_type=_KIND_ERROR[0],
                               custom_error_message=_KIND_ERROR[1])]


class Quadratic(StrictModel):
    """(1/2) w'Qw + c'w + l1 ||w||_1 + (l2/2)||w||^2 with Q symmetric positive semidefinite."""

    type: Literal["quadratic"]
    Q: MatrixValue
    c: VectorValue | None = None
    l1: Weight = 0.0
    l2: Weight = 0.0


class MaxOf(StrictModel):
    """The robust objective max_i L_i(theta) over empirical risks, each with its own data
    (Cotter et al. 2019, §6.1: solved as min xi s.t. L_i(theta) <= xi, their Equation 3)."""

    type: Literal["max_of"]
    terms: list[Risk] = Field(min_length=2, max_length=MAX_TERMS)


Objective = Annotated[
    Annotated[PointRisk, Tag("point_risk")] | Annotated[PairRisk, Tag("pair_risk")]
    | Annotated[Quadratic, Tag("quadratic")] | Annotated[MaxOf, Tag("max_of")]
    | Annotated[RateObjective, Tag("rate")],
    Discriminator(_objective_kind, custom_error_type=_KIND_ERROR[0],
                  custom_error_message=_KIND_ERROR[1])]


class LinearConstraint(StrictModel):
    """A w <= b (rows are scaled to unit norm when compiled)."""

    type: Literal["linear"]
    A: MatrixValue
    b: VectorValue


class OrderingConstraint(StrictModel):
    """w_i <= w_j for each pair, or w_c0 <= w_c1 <= ... along a chain."""

    type: Literal["ordering"]
    pairs: list[Annotated[list[CoordinateIndex], Field(min_length=2, max_length=2)]] | None = None
    chain: list[CoordinateIndex] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> OrderingConstraint:
        if (self.pairs is None) == (self.chain is None):
            raise ValueError("give exactly one of 'pairs' (list of [i, j]) or 'chain' "
                             "(list of indices)")
        return self


class MonotoneLatticeConstraint(StrictModel):
    """Lattice parameters (C order over ``shape``) increase along each ``increasing`` axis
    and decrease along each ``decreasing`` one."""

    type: Literal["monotone_lattice"]
    shape: list[Count] = Field(min_length=1)
    increasing: list[Annotated[int, Field(ge=0)]]
    decreasing: list[Annotated[int, Field(ge=0)]] = []

    @field_validator("shape")
    @classmethod
    def _fits_a_dimension(cls, shape: list[int]) -> list[int]:
        if math.prod(shape) > MAX_SIZE:
            raise ValueError(f"shape {shape[:8]} has more than {MAX_SIZE:,} vertices (the "
                             "largest dimension)")
        return shape

    @model_validator(mode="after")
    def _axes_exist(self) -> MonotoneLatticeConstraint:
        for name in ("increasing", "decreasing"):
            for k, axis in enumerate(getattr(self, name)):
                if axis >= len(self.shape):
                    raise ValueError(f"{name}[{k}] = {axis} is not an axis of shape "
                                     f"{self.shape} (axes are 0..{len(self.shape) - 1})")
        axes = self.increasing + self.decreasing
        if len(set(axes)) != len(axes):
            raise ValueError("increasing and decreasing list an axis twice")
        return self


Constraint = Annotated[
    LinearConstraint | OrderingConstraint | MonotoneLatticeConstraint | RateConstraint
    | GroupLossConstraint,
    Field(discriminator="type"),
]


def _model_default_described(schema: dict[str, Any]) -> None:
    """OpenAPI client generators take no default on a union of objects: say it in words."""
    model = schema["properties"]["model"]
    model["description"] = f"default: {json.dumps(model.pop('default'))} (scores x.w)"


class Spec(StrictModel):
    """A whole problem: min f(w) over W subject to every constraint block."""

    model_config = ConfigDict(json_schema_extra=_model_default_described)

    spec_version: Literal[1] = 1
    name: str | None = None
    dimension: int | None = Field(None, ge=1, le=MAX_SIZE)
    bounds: Bounds = Bounds()
    model: Model = LinearModel(type="linear")
    objective: Objective
    constraints: list[Constraint] = []
    solver: Solver = Solver()
    output: Output = Output()
    #: held-out examples for the Result's report (:mod:`worker.spec.validation`)
    validation: Validation | None = None
    #: solve once per value of one field (:mod:`worker.spec.sweep`)
    sweep: Sweep | None = None

    @property
    def terms(self) -> list[EmpiricalRisk]:
        """The objective's empirical risks (none for a quadratic)."""
        objective = self.objective
        return objective.terms if isinstance(objective, MaxOf) else \
            [objective] if isinstance(objective, EmpiricalRisk) else []

    @property
    def network(self) -> bool:
        """Whether the network games solve it (:mod:`worker.algorithms.runners.network_games`): an
        MLP, K scores, a robust objective, or group-loss constraints (the games play loss
        constraints as they play a robust objective's terms)."""
        return (self.model.network or isinstance(self.objective, MaxOf)
                or any(t.loss == SOFTMAX_CROSS_ENTROPY for t in self.terms)
                or any(c.type == "group_loss" for c in self.constraints))

    @model_validator(mode="after")
    def _tables_fit(self) -> Spec:
        check_table_spec(self)
        return self

    @model_validator(mode="after")
    def _network_fits(self) -> Spec:
        if not self.network:
            return self
        bounded = [k for k, c in enumerate(self.constraints) if c.type == "group_loss"]
        if bounded and (isinstance(self.objective, Quadratic | RateObjective)
                        or any(t.loss == PAIRWISE_HINGE for t in self.terms)):
            raise ValueError(f"constraints[{bounded[0]}]: group_loss constraints are played "
                             "beside an empirical risk of one score per example (not a "
                             "quadratic, rate or pairwise_hinge objective); give the "
                             "objective as an empirical_risk over data.features")
        if isinstance(self.objective, Quadratic | RateObjective):
            raise ValueError(f"model: a {self.objective.type} objective is solved for the "
                             "linear model only; use the linear model")
        if any(t.loss == PAIRWISE_HINGE for t in self.terms):
            raise ValueError("objective: pairwise_hinge scores differences of rows, which "
                             "only a linear model on one objective can")
        if self.solver.algorithm not in NETWORK_ALGORITHMS:
            raise ValueError(f"solver.algorithm: {self.solver.algorithm} trains linear "
                             "models on one objective; networks, softmax_cross_entropy, "
                             f"max_of and group_loss constraints take one of "
                             f"{', '.join(NETWORK_ALGORITHMS)}")
        for i, term in enumerate(self.terms):
            if (term.loss, term.classes) != (self.terms[0].loss, self.terms[0].classes) and \
                    SOFTMAX_CROSS_ENTROPY in (term.loss, self.terms[0].loss):
                raise ValueError(f"objective.terms[{i}]: loss {term.loss!r} with classes "
                                 f"{term.classes} does not score the outputs terms[0] does "
                                 f"({self.terms[0].loss!r}, classes {self.terms[0].classes});"
                                 " every term of a robust objective scores the same K")
        multiclass = any(t.loss == SOFTMAX_CROSS_ENTROPY for t in self.terms)
        for k, constraint in enumerate(self.constraints):
            if constraint.type not in ("rate", "group_loss"):
                raise ValueError(f"constraints[{k}]: {constraint.type} constraints act on "
                                 "a linear model's weights, played by the linear methods; "
                                 "with this model or objective, or beside group_loss "
                                 "constraints, only rate and group_loss constraints are "
                                 "supported")
            if multiclass:
                what = "count positive predictions of" if constraint.type == "rate" else \
                    f"bound a {constraint.loss} loss of"
                raise ValueError(f"constraints[{k}]: {constraint.type} constraints {what} "
                                 "one score; softmax_cross_entropy has K")
        return self


def parse_spec(raw: Any) -> Spec:
    """Validate a decoded JSON value as a :class:`Spec`; raise :class:`SpecError` if invalid."""
    if isinstance(raw, Spec):
        return raw
    if not isinstance(raw, dict):
        raise SpecError.at("", f"a spec is a JSON object, got {type(raw).__name__}")
    try:
        return Spec.model_validate(raw)
    except ValidationError as error:
        raise SpecError(readable_issues(error.errors(include_url=False),
                                        _is_union_member)) from None


_TAGS = (union_tags(Constraint) | union_tags(Objective) | union_tags(Model)
         | {"example_data", "table_data"} | SIDE_TAGS)
_TYPE_NAMES = {"float", "int", "str", "bool", "list", "dict", "CooMatrix", "DataRef", "RateTerm",
               "RateSum", "Minibatch", "Bounds", "EmpiricalRisk", "ValidationData",
               "ValidationSplit", "WarmStartJob", "WarmStartResult"}


def _is_union_member(part: Any) -> bool:
    """pydantic names the union member it tried in error locations; users need only fields."""
    return isinstance(part, str) and (part in _TAGS or part in _TYPE_NAMES
                                      or any(c in part for c in "[(")
                                      or validator_name(part))
