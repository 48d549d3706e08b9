"""Problem spec v1 (README "Problem spec") as pydantic models, and :func:`parse_spec`.

Unknown fields are rejected everywhere. Checks that need the problem's dimension (index
ranges, shapes) happen when the spec is compiled (:mod:`worker.problem.compile`), with the same
``path: what is wrong; what to do`` messages.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from worker.data.refs import MAX_SIZE, MatrixValue, VectorValue
from worker.errors import SpecError
from worker.losses import LOSS_NAMES, PAIRWISE_HINGE, SOFTMAX_CROSS_ENTROPY
from worker.spec.strict import StrictModel
from worker.spec.sweep import Sweep
from worker.spec.validation import Validation
from worker.spec.warm_start import WarmStart

#: The largest ``solver.iterations``: far beyond any time limit, well inside the kernels'
#: 64-bit counters.
MAX_ITERATIONS = 2**50
#: The largest step scale, penalty weight or regularization weight: far beyond any useful
#: value, and small enough that one step cannot overflow a float.
MAX_SCALE = 1e12

#: A coordinate index (negative ones are refused with the valid range when compiled).
CoordinateIndex = Annotated[int, Field(ge=-MAX_SIZE, le=MAX_SIZE)]
#: A count that sizes an array (minibatch, groups, partition rows).
Count = Annotated[int, Field(ge=1, le=MAX_SIZE)]
#: A positive scale of a step or penalty.
Scale = Annotated[float, Field(gt=0, le=MAX_SCALE, allow_inf_nan=False)]
#: A regularization weight.
Weight = Annotated[float, Field(ge=0.0, le=MAX_SCALE, allow_inf_nan=False)]

#: The most units of a hidden layer, hidden layers of a network, classes of a multiclass loss
#: and terms of a robust objective (memory is bounded by the job budget besides).
MAX_UNITS = 65_536
MAX_LAYERS = 16
MAX_CLASSES = 10_000
MAX_TERMS = 256

ALGORITHMS = ("auto", "lighttouch", "fulltouch", "midtouch", "projected_sgd", "epro_sgd",
              "epro_orda", "svrg_ol", "lagrangian", "proxy_lagrangian")


class Bounds(StrictModel):
    """The simple domain W = [lower, upper]: scalars, per-coordinate arrays or data refs."""

    lower: float | VectorValue | None = None
    upper: float | VectorValue | None = None


class RiskData(StrictModel):
    """Examples: ``features`` + ``labels``, or ``positive`` + ``negative`` for pairwise_hinge.

    ``groups`` names subsets of the examples (0/1 vectors, one entry per row) for rate
    constraints.
    """

    features: MatrixValue | None = None
    labels: VectorValue | None = None
    positive: MatrixValue | None = None
    negative: MatrixValue | None = None
    groups: dict[str, VectorValue] | None = None


def _data_fits_loss_schema(schema: dict[str, Any]) -> None:
    """JSON schema of :meth:`EmpiricalRisk._data_fits_loss`: which ``data`` fields a loss needs."""
    def given(*names: str) -> dict[str, Any]:
        return {"required": list(names),
                "properties": {name: {"not": {"type": "null"}} for name in names}}

    def absent(*names: str) -> dict[str, Any]:
        return {"properties": {name: {"type": "null"} for name in names}}

    schema["anyOf"] = [
        {"properties": {"loss": {"const": PAIRWISE_HINGE},
                        "data": {"allOf": [given("positive", "negative"),
                                           absent("features", "labels")]}}},
        {"properties": {"loss": {"enum": [name for name in LOSS_NAMES
                                          if name != PAIRWISE_HINGE]},
                        "data": {"allOf": [given("features"),
                                           absent("positive", "negative")]}}},
    ]


class EmpiricalRisk(StrictModel):
    """Mean loss over examples plus l1 ||w||_1 + (l2/2)||w||^2."""

    model_config = ConfigDict(json_schema_extra=_data_fits_loss_schema)

    type: Literal["empirical_risk"]
    loss: Literal[LOSS_NAMES]  # type: ignore[valid-type]
    data: RiskData
    l1: Weight = 0.0
    l2: Weight = 0.0
    #: K of softmax_cross_entropy (labels 0..K-1); null: the largest label + 1
    classes: Annotated[int, Field(ge=2, le=MAX_CLASSES)] | None = None

    @model_validator(mode="after")
    def _data_fits_loss(self) -> EmpiricalRisk:
        data = self.data
        if self.classes is not None and self.loss != SOFTMAX_CROSS_ENTROPY:
            raise ValueError(f"classes is the K of softmax_cross_entropy; loss {self.loss!r} "
                             "scores one output (omit classes)")
        if self.loss == PAIRWISE_HINGE:
            missing = [k for k in ("positive", "negative") if getattr(data, k) is None]
            extra = [k for k in ("features", "labels") if getattr(data, k) is not None]
            if missing or extra:
                raise ValueError("pairwise_hinge takes data.positive and data.negative "
                                 "(rows x+ and x- of each pair), not features/labels")
        else:
            if data.features is None:
                raise ValueError(f"loss {self.loss!r} needs data.features (and data.labels, "
                                 "unless the features file carries them)")
            if data.positive is not None or data.negative is not None:
                raise ValueError("data.positive/negative are only for loss 'pairwise_hinge'")
        return self


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
    terms: list[EmpiricalRisk] = Field(min_length=2, max_length=MAX_TERMS)


Objective = Annotated[EmpiricalRisk | Quadratic | MaxOf, Field(discriminator="type")]


class LinearModel(StrictModel):
    """Scores x.w (one output), or x W with W (d, K) for softmax_cross_entropy."""

    type: Literal["linear"]


class MlpModel(StrictModel):
    """A network of dense layers (:mod:`worker.kernels.network`): ``hidden`` ReLU layers of
    the given widths, biases on every layer, weights initialized from ``init_seed``."""

    type: Literal["mlp"]
    hidden: list[Annotated[int, Field(ge=1, le=MAX_UNITS)]] = Field(min_length=1,
                                                                    max_length=MAX_LAYERS)
    activation: Literal["relu"] = "relu"
    init_seed: int = Field(0, ge=0, lt=2**63)


Model = Annotated[LinearModel | MlpModel, Field(discriminator="type")]


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
    """Lattice parameters (C order over ``shape``) increase along each ``increasing`` axis."""

    type: Literal["monotone_lattice"]
    shape: list[Count] = Field(min_length=1)
    increasing: list[Annotated[int, Field(ge=0)]]

    @field_validator("shape")
    @classmethod
    def _fits_a_dimension(cls, shape: list[int]) -> list[int]:
        if math.prod(shape) > MAX_SIZE:
            raise ValueError(f"shape {shape[:8]} has more than {MAX_SIZE:,} vertices (the "
                             "largest dimension)")
        return shape

    @model_validator(mode="after")
    def _axes_exist(self) -> MonotoneLatticeConstraint:
        for k, axis in enumerate(self.increasing):
            if axis >= len(self.shape):
                raise ValueError(f"increasing[{k}] = {axis} is not an axis of shape "
                                 f"{self.shape} (axes are 0..{len(self.shape) - 1})")
        if len(set(self.increasing)) != len(self.increasing):
            raise ValueError("increasing lists an axis twice")
        return self


RATE_METRICS = ("positive_prediction_rate", "negative_prediction_rate", "true_positive_rate",
                "false_positive_rate", "true_negative_rate", "false_negative_rate",
                "error_rate")


class RateTerm(StrictModel):
    """``scale`` times a rate ``metric`` on a named group (``null``: all examples)."""

    metric: Literal[RATE_METRICS]  # type: ignore[valid-type]
    group: str | None = None
    scale: float = Field(1.0, allow_inf_nan=False)


class RateData(StrictModel):
    """A rate constraint's own examples: scores x.w on ``features``, ±1 ``labels``, groups."""

    features: MatrixValue
    labels: VectorValue | None = None
    groups: dict[str, VectorValue] | None = None


class RateConstraint(StrictModel):
    """``lhs op rhs`` on rates (Cotter et al. 2019, §1, §6.2), rhs a rate term or a number.

    Compiled to g(w) = lhs - rhs <= 0 (or rhs - lhs for ``>=``), linear in the rates.
    """

    type: Literal["rate"]
    lhs: RateTerm
    op: Literal["<=", ">="]
    rhs: RateTerm | float
    data: RateData | None = None


Constraint = Annotated[
    LinearConstraint | OrderingConstraint | MonotoneLatticeConstraint | RateConstraint,
    Field(discriminator="type"),
]


#: What trains networks, multiclass and robust problems (:attr:`Spec.network`).
NETWORK_ALGORITHMS = ("auto", "lagrangian", "proxy_lagrangian")


class Minibatch(StrictModel):
    """Fixed minibatch sizes: examples (k_f), sampled constraints (k_g), p-update (k_p)."""

    k_f: Count = 2
    k_g: Count = 2
    k_p: Count = 8


class Game(StrictModel):
    """The lambda-player of ``lagrangian`` / ``proxy_lagrangian`` (Cotter et al. 2019).

    ``eta_lambda``: its step ("auto": see :mod:`worker.algorithms.games`); ``radius``: R of
    the Lagrangian's {lambda >= 0, ||lambda||_1 <= R} (null: unbounded, as the paper's §6);
    ``regret``: the proxy-Lagrangian's swap-regret (Algorithm 2) or external-regret player;
    ``proxy``: the upper bound of each rate's indicators that the theta-player differentiates
    (and the Lagrangian relaxes to): ``hinge`` (convex) or ``ramp`` (non-convex, the hinge
    clipped at 1).
    """

    eta_lambda: Literal["auto"] | Scale = "auto"
    radius: Scale | None = None
    regret: Literal["swap", "external"] = "swap"
    proxy: Literal["hinge", "ramp"] = "hinge"


class Svrg(StrictModel):
    """SVRG OL settings (Cutkosky & Busa-Fekete): base learner, schedule, batch phase."""

    learner: Literal["adagrad", "freerex"] = "adagrad"
    schedule: Literal["practical", "theoretical"] = "practical"
    serial_steps: Literal["auto"] | Annotated[int, Field(ge=1, le=MAX_ITERATIONS)] = "auto"
    batch_size: Literal["auto"] | Count = "auto"
    workers: Literal["auto"] | Annotated[int, Field(ge=0, le=4096)] = "auto"
    partition_rows: Count = 2**18

    @model_validator(mode="after")
    def _batch_size_is_practical(self) -> Svrg:
        if self.schedule == "theoretical" and self.batch_size != "auto":
            raise ValueError("batch_size sets the practical schedule's N_k = k * batch_size; "
                             "the theoretical schedule uses N = T^2 (omit batch_size)")
        return self


class Solver(StrictModel):
    """Algorithm choice and its hyperparameters (LightTouch paper, Algorithm 4); ``polish``
    refines the answer of a hinge-loss LP with trust-region LPs
    (:mod:`worker.candidates.polish`)."""

    algorithm: Literal[ALGORITHMS] = "auto"  # type: ignore[valid-type]
    iterations: Literal["auto"] | Annotated[int, Field(ge=1, le=MAX_ITERATIONS)] = "auto"
    time_limit_s: float = Field(600.0, gt=0, allow_inf_nan=False)
    tolerance: float = Field(1e-3, gt=0, lt=1, allow_inf_nan=False)
    seed: int = Field(0, ge=0, lt=2**63)
    gamma: Literal["auto"] | Scale = "auto"
    eta_w: Literal["auto"] | Scale = "auto"
    eta_p: Scale = 0.0625
    minibatch: Literal["auto"] | Minibatch = "auto"
    aggregate: Literal["auto"] | Count = "auto"
    p_update: Literal["auto", "dense", "lazy"] = "auto"
    candidates: int = Field(100, ge=1, le=10_000)
    polish: bool = True
    svrg: Svrg = Svrg()
    game: Game = Game()
    #: start from an earlier answer (:mod:`worker.spec.warm_start`)
    warm_start: WarmStart | None = None


class Output(StrictModel):
    """What the Result carries besides the mixture summary; ``single`` adds the best single
    model of the candidates (Cotter et al. 2019, §6.2 heuristic); ``lower_bound`` a certified
    lower bound on the optimum where the problem is a hinge-loss LP
    (:mod:`worker.candidates.lower_bound`)."""

    mixture: bool = True
    project: bool = True
    single: bool = False
    lower_bound: bool = True


class Spec(StrictModel):
    """A whole problem: min f(w) over W subject to every constraint block."""

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
        """Whether the network games solve it (:mod:`worker.algorithms.network_games`): an
        MLP, K scores, or a robust objective."""
        return (isinstance(self.model, MlpModel) or isinstance(self.objective, MaxOf)
                or any(t.loss == SOFTMAX_CROSS_ENTROPY for t in self.terms))

    @model_validator(mode="after")
    def _network_fits(self) -> Spec:
        if not self.network:
            return self
        if isinstance(self.objective, Quadratic):
            raise ValueError("model: a quadratic objective has no examples to score; use "
                             "the linear model")
        if any(t.loss == PAIRWISE_HINGE for t in self.terms):
            raise ValueError("objective: pairwise_hinge scores differences of rows, which "
                             "only a linear model on one objective can")
        if self.solver.algorithm not in NETWORK_ALGORITHMS:
            raise ValueError(f"solver.algorithm: {self.solver.algorithm} trains linear "
                             "models on one objective; networks, softmax_cross_entropy and "
                             f"max_of take one of {', '.join(NETWORK_ALGORITHMS)}")
        for i, term in enumerate(self.terms):
            if (term.loss, term.classes) != (self.terms[0].loss, self.terms[0].classes) and \
                    SOFTMAX_CROSS_ENTROPY in (term.loss, self.terms[0].loss):
                raise ValueError(f"objective.terms[{i}]: loss {term.loss!r} with classes "
                                 f"{term.classes} does not score the outputs terms[0] does "
                                 f"({self.terms[0].loss!r}, classes {self.terms[0].classes});"
                                 " every term of a robust objective scores the same K")
        multiclass = any(t.loss == SOFTMAX_CROSS_ENTROPY for t in self.terms)
        for k, constraint in enumerate(self.constraints):
            if constraint.type != "rate":
                raise ValueError(f"constraints[{k}]: {constraint.type} constraints act on "
                                 "a linear model's weights; with this model only rate "
                                 "constraints are supported")
            if multiclass:
                raise ValueError(f"constraints[{k}]: rate constraints count positive "
                                 "predictions of one score; softmax_cross_entropy has K")
        return self


def format_location(location: tuple[Any, ...]) -> str:
    """``('constraints', 2, 'pairs', 5)`` → ``constraints[2].pairs[5]``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def parse_spec(raw: Any) -> Spec:
    """Validate a decoded JSON value as a :class:`Spec`; raise :class:`SpecError` if invalid."""
    if isinstance(raw, Spec):
        return raw
    if not isinstance(raw, dict):
        raise SpecError.at("", f"a spec is a JSON object, got {type(raw).__name__}")
    try:
        return Spec.model_validate(raw)
    except ValidationError as error:
        issues = []
        for item in error.errors(include_url=False):
            location = tuple(p for p in item["loc"] if not _is_union_member(p))
            message = item["msg"].removeprefix("Value error, ")
            issues.append((format_location(location), message))
        raise SpecError(issues) from None


def _tags(union: Any) -> set[str]:
    """The ``type`` values of the members of a discriminated union (``Annotated[A | B, ...]``)."""
    members = get_args(get_args(union)[0])
    return {get_args(member.model_fields["type"].annotation)[0] for member in members}


_TAGS = _tags(Constraint) | _tags(Objective) | _tags(Model)
_TYPE_NAMES = {"float", "int", "str", "bool", "list", "dict", "CooMatrix", "DataRef", "RateTerm",
               "Minibatch", "Bounds", "EmpiricalRisk", "ValidationData", "ValidationSplit",
               "WarmStartJob", "WarmStartResult"}


def _is_union_member(part: Any) -> bool:
    """pydantic names the union member it tried in error locations; users need only fields."""
    return isinstance(part, str) and (part in _TAGS or part in _TYPE_NAMES
                                      or any(c in part for c in "[(")
                                      or part.startswith(("literal", "function-")))
