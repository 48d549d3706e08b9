"""The Result (docs/spec.md#result): the mixture of at most m+1 solutions, its mean, the
projection."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from worker.report.schema import Report
from worker.spec.model_types import type_names
from worker.spec.solver import DEFAULT_TOLERANCE


class ResultModel(BaseModel):
    """Base: unknown fields are errors, so the contract cannot drift silently."""

    model_config = ConfigDict(extra="forbid")


class Sizes(ResultModel):
    """The problem's sizes: d parameters, m constraints, n examples (pairs for
    pairwise_hinge)."""

    parameters: int
    constraints: int
    examples: int


class Member(ResultModel):
    """One mixture member: a candidate solution and the probability of deploying it."""

    weight: float
    iteration: int
    kind: Literal["average", "iterate", "polished", "projected", "exact", "warm_start"]
    objective: float
    max_violation: float
    solution: list[float] | None = None


class Expected(ResultModel):
    """Expectations over the mixture (max over constraints of the expected violation)."""

    objective: float
    max_violation: float


class Feasibility(ResultModel):
    """The verdict on the mixture's constraints: ``feasible`` when its largest expected
    violation (``Result.expected.max_violation``) is at most ``tolerance``
    (``solver.tolerance``). Every reader (the CLI, the job's summary, the dashboard) shows
    this verdict and never judges the violation again."""

    feasible: bool
    tolerance: float

    @classmethod
    def judged(cls, max_violation: float, tolerance: float) -> Feasibility:
        """The verdict on a largest expected violation at ``tolerance``."""
        return cls(feasible=bool(max_violation <= tolerance), tolerance=tolerance)


class Resume(ResultModel):
    """Where a linear game (``lagrangian``, ``proxy_lagrangian``) ended, so that a warm start
    from this Result resumes it (docs/results.md#warm-starts): the multipliers lambda
    (m+1; [0] on the objective), the proxy-Lagrangian's log M ((m+1) x (m+1), swap regret)
    and log lambda (external regret), the theta-player's AdaGrad diameter (null on a fixed
    ``eta_w`` schedule) and its sum of squared step norms. A warm start resumes it only in
    the same game: the same ``algorithm``, ``regret`` (null for the Lagrangian) and number of
    constraints."""

    algorithm: str
    regret: Literal["swap", "external"] | None
    multipliers: list[float]
    log_weights: list[list[float]]
    log_multipliers: list[float]
    theta_diameter: float | None
    gradient_sum: float


class Summary(ResultModel):
    """A Result's headline figures, the ones a person reads as a finished job's outcome: its
    status document, its ``result`` event, the dashboard and the CLI's bar show these, not
    the last progress report (docs/service.md#a-finished-jobs-figures)."""

    #: the mixture's expected objective and largest expected violation (Result.expected)
    objective: float
    max_violation: float
    #: the certified relative gap (stats.relative_gap); null when the run has no certificate
    relative_gap: float | None = None
    #: the number of mixture members
    members: int
    #: the Result's verdict on its constraints (Result.feasibility)
    feasibility: Feasibility


class Point(ResultModel):
    """A single solution with its objective and maximum violation."""

    solution: list[float]
    objective: float
    max_violation: float


class Projected(Point):
    """Π_g(mean): the exact projection onto W ∩ {g <= 0}, and how it was computed."""

    method: str
    status: str


class NetworkModel(ResultModel):
    """How the solutions score a row (:mod:`worker.problem.network`): layer widths
    ``sizes`` = [d, hidden..., K], biases or not; each solution is the flat parameter vector
    (per layer W (n_l, n_{l+1}) row-major, then its bias)."""

    type: Literal[type_names(reads_tables=False)]  # the network models' names
    sizes: list[int]
    bias: bool
    activation: Literal["relu"] = "relu"


class CalibratedFeature(ResultModel):
    """One input of a calibrated model (docs/tables.md): its column and fixed calibrator.

    A numeric feature's calibrator interpolates ``outputs`` at ``keypoints`` (constant beyond
    them); a categorical one maps ``categories[i]`` to ``outputs[i]``. In a calibrated linear
    model ``outputs`` are the parameters ``offset .. offset + len(outputs) - 1`` of the
    deployed solution (the projected mean, else the mean); in a lattice they are the lattice
    coordinates the keypoints (or the categories) map to. ``monotonic`` is the declared
    direction: a categorical feature's ``order`` is its ``monotonic_order`` as declared, along
    which the model rises (``increasing``, also an order declared without a direction) or
    falls (``decreasing``); without an order it is ``none``."""

    column: str
    kind: Literal["numeric", "categorical"]
    keypoints: list[float] | None = None
    categories: list[str] | None = None
    monotonic: Literal["increasing", "decreasing", "none"] = "none"
    convexity: Literal["convex", "concave", "none"] = "none"
    order: list[str] | None = None
    offset: int | None = None
    outputs: list[float]


class CalibratedModel(ResultModel):
    """A model on raw table rows: ``columns`` it reads, its ``features`` in order, and the
    parameter layout: for ``calibrated_linear`` parameter 0 is the bias and each feature's
    outputs follow at its ``offset``; for ``calibrated_lattice`` the parameters are the
    values of the lattice's vertices in C order over ``sizes``."""

    type: Literal[type_names(reads_tables=True)]  # the calibrated models' names
    columns: list[str]
    features: list[CalibratedFeature]
    sizes: list[int] | None = None
    layout: str


class Result(ResultModel):
    """What a solve returns, the same in-process, from the CLI and over HTTP."""

    status: Literal["succeeded", "failed", "cancelled"] = "succeeded"
    algorithm: str
    sizes: Sizes
    mixture: list[Member]
    expected: Expected
    #: whether ``expected.max_violation`` is within ``solver.tolerance``; ``status`` says
    #: only how the job ended (a Result file written without it is judged when read, at
    #: ``solver.tolerance``'s default: :meth:`_judged_when_older`)
    feasibility: Feasibility
    mean: Point
    projected: Projected | None = None
    #: output.single: the best single candidate (Cotter et al. 2019, §6.2 heuristic)
    single: Member | None = None
    #: the deterministic model: the best single candidate (docs/results.md; it always
    #: carries its solution)
    deterministic: Member | None = None
    #: objective, error and every constraint on training and validation data
    report: Report | None = None
    #: a sweep's Results, one per value, and its front (:mod:`worker.pipeline.sweep`)
    sweep: SweepResult | None = None
    #: the network or calibrated model the solutions parameterize; null: scores x.w
    model: NetworkModel | CalibratedModel | None = None
    #: a linear game's end state, which a warm start from this Result resumes
    resume: Resume | None = None
    stats: dict[str, float | int | str | bool]
    notes: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _judged_when_older(cls, raw: Any) -> Any:
        """A Result written before it carried its verdict (a ``lighttouch solve -o`` file
        used by ``predict`` or as a warm start) gets one, at the default tolerance."""
        if isinstance(raw, dict) and "feasibility" not in raw and \
                isinstance(raw.get("expected"), dict):
            violation = raw["expected"].get("max_violation")
            if isinstance(violation, int | float):
                raw = raw | {"feasibility": Feasibility.judged(
                    float(violation), DEFAULT_TOLERANCE).model_dump()}
        return raw

    def summary(self) -> Summary:
        """The headline figures of this Result."""
        gap = self.stats.get("relative_gap")
        return Summary(objective=self.expected.objective,
                       max_violation=self.expected.max_violation,
                       relative_gap=None if gap is None else float(gap),
                       members=len(self.mixture), feasibility=self.feasibility)


class FrontPoint(ResultModel):
    """One value of a sweep: the mixture's objective, error and largest violation on
    training data and (null without validation data) on validation data."""

    value: float | int | str | bool
    objective: float
    error: float | None
    max_violation: float
    validation_objective: float | None
    validation_error: float | None
    validation_max_violation: float | None


class SweepPoint(ResultModel):
    """One value of a sweep and its Result."""

    value: float | int | str | bool
    result: Result


class SweepResult(ResultModel):
    """A sweep of the field at ``path``: a Result per value, in order, and the front."""

    path: str
    points: list[SweepPoint]
    front: list[FrontPoint]


Result.model_rebuild()
