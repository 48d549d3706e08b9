"""The spec's rate constraints (docs/rates.md): each side a number, a rate term, or a sum of
scaled terms plus a constant, so that ``lhs op rhs`` stays linear in the rates.

A constraint ``lhs <= rhs`` is g = lhs - rhs <= 0 (``>=``: g = rhs - lhs), and
:meth:`RateConstraint.linear` gives g as (coefficient, term) pairs plus a constant. The
ratio metrics (precision, false discovery and false omission rates) are ratios of counts,
not means over a fixed subset: one of them is linear in the counts only against a constant
(precision(G) >= c <=> TP(G) - c PP(G) >= 0), so such a term stands alone against numbers.
A comparison of two ratios (one group's precision against another's) is not linear in the
rates and is refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from worker.data.refs import MatrixValue, VectorValue
from worker.spec.strict import StrictModel

#: Means of an indicator over a subset fixed by the group and the label.
MEAN_METRICS = ("positive_prediction_rate", "negative_prediction_rate", "true_positive_rate",
                "false_positive_rate", "true_negative_rate", "false_negative_rate",
                "error_rate")
#: Ratios of counts whose denominator depends on the predictions.
RATIO_METRICS = ("precision", "false_discovery_rate", "false_omission_rate")
RATE_METRICS = MEAN_METRICS + RATIO_METRICS
#: The metrics that need no labels.
PREDICTION_RATES = ("positive_prediction_rate", "negative_prediction_rate")
#: A constraint's sides, in order.
SIDES = ("lhs", "rhs")
#: The tags of a side's forms (error paths leave them out).
SIDE_TAGS = frozenset({"rate_number", "rate_term", "rate_sum"})
#: The most terms of one side.
MAX_RATE_TERMS = 256

#: A finite number.
Finite = Annotated[float, Field(allow_inf_nan=False)]


class RateTerm(StrictModel):
    """``scale`` times a rate ``metric`` on a named group (``null``: all examples)."""

    metric: Literal[RATE_METRICS]  # type: ignore[valid-type]
    group: str | None = None
    scale: Finite = 1.0


class RateSum(StrictModel):
    """The sum of scaled rate ``terms`` plus ``constant``."""

    terms: list[RateTerm] = Field(min_length=1, max_length=MAX_RATE_TERMS)
    constant: Finite = 0.0


def _side_kind(raw: Any) -> str:
    """``rate_sum`` (it has ``terms``), ``rate_term`` (any other object) or
    ``rate_number``."""
    if isinstance(raw, dict | RateSum | RateTerm):
        is_sum = "terms" in raw if isinstance(raw, dict) else isinstance(raw, RateSum)
        return "rate_sum" if is_sum else "rate_term"
    return "rate_number"


#: One side of a rate constraint: a number, a term, or a sum of terms plus a constant.
RateSide = Annotated[Annotated[Finite, Tag("rate_number")] | Annotated[RateTerm, Tag("rate_term")]
                     | Annotated[RateSum, Tag("rate_sum")], Discriminator(_side_kind)]


class RateData(StrictModel):
    """A rate constraint's own examples: scores x.w on ``features``, ±1 ``labels``, groups,
    and non-negative example ``weights`` (default: every example weighs 1)."""

    features: MatrixValue
    labels: VectorValue | None = None
    groups: dict[str, VectorValue] | None = None
    weights: VectorValue | None = None


def side_terms(side: float | RateTerm | RateSum, name: str) -> tuple[list[tuple[str, RateTerm]],
                                                                       float]:
    """([(the term's path under the constraint, term)], constant) of the side ``name``."""
    if isinstance(side, RateSum):
        return [(f"{name}.terms[{i}]", term) for i, term in enumerate(side.terms)], \
            side.constant
    if isinstance(side, RateTerm):
        return [(name, side)], 0.0
    return [], float(side)


class RateConstraint(StrictModel):
    """``lhs op rhs`` on rates (Cotter et al. 2019, §1, §6.2), each side a number, a rate
    term or a sum of terms plus a constant.

    Compiled to g(w) = lhs - rhs <= 0 (or rhs - lhs for ``>=``), linear in the rates.
    """

    type: Literal["rate"]
    lhs: RateSide
    op: Literal["<=", ">="]
    rhs: RateSide
    data: RateData | None = None

    def linear(self) -> tuple[list[tuple[float, RateTerm, str]], float]:
        """g as ([(coefficient, term, its path under the constraint)], constant):
        g = sum coefficient * term's metric + constant (a term's ``scale`` is in its
        coefficient)."""
        sign = 1.0 if self.op == "<=" else -1.0
        triples, constant = [], 0.0
        for name, side_sign in zip(SIDES, (sign, -sign), strict=True):
            terms, number = side_terms(getattr(self, name), name)
            triples += [(side_sign * term.scale, term, where) for where, term in terms]
            constant += side_sign * number
        return triples, constant

    @model_validator(mode="after")
    def _linear_in_rates(self) -> RateConstraint:
        pairs, _ = self.linear()
        if not pairs:
            raise ValueError("neither side has a rate term; give a metric on one side")
        ratios = [term.metric for _, term, _ in pairs if term.metric in RATIO_METRICS]
        if ratios and len(pairs) > 1:
            raise ValueError(f"{ratios[0]} is a ratio of counts, linear in them only against "
                             "a constant: write it as the one term of the constraint, the "
                             "other side a number (a comparison of two ratios, such as two "
                             "groups' precisions, is not linear in the rates)")
        if ratios and pairs[0][0] == 0.0:
            raise ValueError(f"the scale of {ratios[0]} is 0; give a nonzero scale")
        return self


class RateObjectiveData(StrictModel):
    """A rate objective's examples: scores x.w on ``features``, ±1 ``labels`` (needed by
    every metric but the prediction rates), named ``groups`` (0/1 vectors, one entry per
    row) and non-negative example ``weights`` (default: every example weighs 1), on which
    the spec's rate constraints without their own data also count."""

    features: MatrixValue
    labels: VectorValue | None = None
    groups: dict[str, VectorValue] | None = None
    weights: VectorValue | None = None


class RateObjective(StrictModel):
    """Minimize a rate (docs/rates.md#a-rate-as-the-objective): ``metric`` on ``group``
    (``null``: all examples) of ``data``, e.g. the least false positive rate subject to a
    true positive rate constraint (Neyman-Pearson). The proxy-Lagrangian (Cotter et al. 2019,
    Algorithm 2) plays it with the rate's hinge proxy; candidates are scored on the true
    rate."""

    type: Literal["rate"]
    metric: Literal[MEAN_METRICS]  # type: ignore[valid-type]
    group: str | None = None
    data: RateObjectiveData

    @field_validator("metric", mode="before")
    @classmethod
    def _mean_metric(cls, metric: Any) -> Any:
        if metric in RATIO_METRICS:
            raise ValueError(f"{metric} is a ratio of counts whose denominator depends on the "
                             "predictions, not a mean the game can minimize; use one of "
                             f"{', '.join(MEAN_METRICS)} (e.g. bound {metric} by a "
                             "constraint instead)")
        if isinstance(metric, str) and metric not in MEAN_METRICS:
            raise ValueError(f"unknown metric {metric!r}; one of {', '.join(MEAN_METRICS)}")
        return metric
