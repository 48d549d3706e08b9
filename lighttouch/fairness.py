"""Fairness criteria by fairlearn's names and parameters, as spec constraints (docs/rates.md).

Each criterion bounds, for every group of the sensitive features and every event (all
examples, or one label for the odds), the group's rate against the overall rate of that
event, in both directions, as fairlearn's ``UtilityParity`` moments do (Agarwal et al.
2018, the expression above Theorem 1):

* ``difference_bound=d``: rate(G) - rate(all) <= d and rate(all) - rate(G) <= d;
* ``ratio_bound=r`` (0 < r <= 1, with ``ratio_bound_slack=s``): r rate(G) - rate(all) <= s
  and r rate(all) - rate(G) <= s.

Each is linear in the rates, so each is two rate constraints of the spec per rate, with
``"group": "*"`` that the estimators expand to one constraint per group
(:mod:`lighttouch.problem`). :meth:`to_spec` gives them.

``BoundedGroupLoss(loss, upper_bound=b)`` bounds every group's mean loss by b, as fairlearn's
moment of that name (Agarwal, Dudík & Wu 2019, "Fair Regression", §2): one ``group_loss``
constraint of the spec with ``"group": "*"`` (docs/rates.md#group-losses).
"""

from __future__ import annotations

import math
from typing import Any

from lighttouch.problem import EVERY_GROUP
from worker.spec.group_loss import GROUP_LOSSES

__all__ = ["BoundedGroupLoss", "DemographicParity", "EqualizedOdds", "ErrorRateParity",
           "FalsePositiveRateParity", "TruePositiveRateParity"]


def _check_bound(name: str, value: float, low: float, high: float, low_open: bool) -> float:
    """``value`` as a float, or ValueError naming the parameter and the range."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"{name}: give a number, got {value!r}")
    if value < low or (low_open and value == low) or value > high:
        interval = f"({low:g}, {high:g}]" if low_open else f"[{low:g}, {high:g}]"
        raise ValueError(f"{name}: {value!r} is outside {interval}; a bound on rates, "
                         f"which lie in [0, 1], is a number in {interval}")
    return float(value)


class _Parity:
    """A parity criterion on :attr:`METRICS` (one rate per event)."""

    #: The rate of each event the criterion compares across groups.
    METRICS: tuple[str, ...] = ()

    def __init__(self, *, difference_bound: float | None = None,
                 ratio_bound: float | None = None, ratio_bound_slack: float = 0.0):
        if difference_bound is not None and ratio_bound is not None:
            raise ValueError(f"{type(self).__name__}: give difference_bound or ratio_bound, "
                             "not both")
        if difference_bound is None and ratio_bound is None:
            raise ValueError(f"{type(self).__name__}: give difference_bound (e.g. 0.05) or "
                             "ratio_bound (e.g. 0.9)")
        self.difference_bound = None if difference_bound is None else \
            _check_bound("difference_bound", difference_bound, 0.0, 1.0, False)
        self.ratio_bound = None if ratio_bound is None else \
            _check_bound("ratio_bound", ratio_bound, 0.0, 1.0, True)
        self.ratio_bound_slack = _check_bound("ratio_bound_slack", ratio_bound_slack, 0.0,
                                              1.0, False)

    def __repr__(self) -> str:
        bound = f"difference_bound={self.difference_bound!r}" if self.ratio_bound is None \
            else f"ratio_bound={self.ratio_bound!r}" + \
            (f", ratio_bound_slack={self.ratio_bound_slack!r}" if self.ratio_bound_slack
             else "")
        return f"{type(self).__name__}({bound})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *sorted(vars(self).items())))

    def to_spec(self) -> list[dict[str, Any]]:
        """The spec's rate constraints: two per metric, each for every group (``"*"``)."""
        return [constraint for metric in self.METRICS for constraint in self._pair(metric)]

    def _pair(self, metric: str) -> list[dict[str, Any]]:
        group = {"metric": metric, "group": EVERY_GROUP}
        if self.ratio_bound is None:
            bound = self.difference_bound
            return [_rate(group, "<=", _overall(metric, 1.0, bound)),
                    _rate(group, ">=", _overall(metric, 1.0, -bound))]
        ratio, slack = self.ratio_bound, self.ratio_bound_slack
        return [_rate({**group, "scale": ratio}, "<=", _overall(metric, 1.0, slack)),
                _rate(group, ">=", _overall(metric, ratio, -slack))]


def _rate(lhs: dict, op: str, rhs: dict) -> dict[str, Any]:
    return {"type": "rate", "lhs": lhs, "op": op, "rhs": rhs}


def _overall(metric: str, scale: float, constant: float) -> dict[str, Any]:
    """``scale`` times the overall rate plus ``constant`` (a plain term without one, so that
    a sweep over ``constraints[*].rhs.scale`` reaches it)."""
    term = {"metric": metric, "scale": scale}
    return term if constant == 0 else {"terms": [term], "constant": constant}


class DemographicParity(_Parity):
    """Every group's positive prediction rate within the bound of the overall one."""

    METRICS = ("positive_prediction_rate",)


class TruePositiveRateParity(_Parity):
    """Every group's true positive rate within the bound of the overall one."""

    METRICS = ("true_positive_rate",)


class FalsePositiveRateParity(_Parity):
    """Every group's false positive rate within the bound of the overall one."""

    METRICS = ("false_positive_rate",)


class EqualizedOdds(_Parity):
    """True and false positive rate parity together (per label)."""

    METRICS = ("true_positive_rate", "false_positive_rate")


class ErrorRateParity(_Parity):
    """Every group's error rate within the bound of the overall one."""

    METRICS = ("error_rate",)


class BoundedGroupLoss:
    """Every group's mean ``loss`` (a name of ``LOSSES``: hinge, logistic, squared,
    squared_hinge) at most ``upper_bound`` (>= 0, as every loss is)."""

    def __init__(self, loss: str, *, upper_bound: float):
        if loss not in GROUP_LOSSES:
            raise ValueError(f"loss: {loss!r} is not a loss of one score; give one of "
                             f"{', '.join(GROUP_LOSSES)}")
        if isinstance(upper_bound, bool) or not isinstance(upper_bound, int | float) or \
                not math.isfinite(upper_bound) or upper_bound < 0:
            raise ValueError(f"upper_bound: {upper_bound!r} is not a bound on a mean loss; "
                             "give a finite number >= 0 (every loss is >= 0)")
        self.loss = loss
        self.upper_bound = float(upper_bound)

    def __repr__(self) -> str:
        return f"BoundedGroupLoss({self.loss!r}, upper_bound={self.upper_bound!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.loss, self.upper_bound))

    def to_spec(self) -> list[dict[str, Any]]:
        """The spec's group-loss constraint for every group (``"*"``)."""
        return [{"type": "group_loss", "group": EVERY_GROUP, "loss": self.loss, "op": "<=",
                 "rhs": self.upper_bound}]
