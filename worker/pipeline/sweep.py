"""A ``sweep`` (:mod:`worker.spec.sweep`): the spec solved once per value, each variant
warm-started from the one before (its mean as w(1), its members among the LP's candidates,
:mod:`worker.pipeline.warm`), and the front of objective and error against the value on
training and validation data. A point whose answer is not feasible while the next point's
is gets one more solve, warm-started from that next point (:func:`_retry_unmet`).

The sweep keeps ``solver.time_limit_s`` as a whole: each variant may use an equal share of
the time left. The variants read the same data references; the parsed-data cache (on unless
``LIGHTTOUCH_DATA_CACHE_BYTES=0``) makes every read after the first a memory-mapped hit.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from worker.errors import SpecError
from worker.result import FrontPoint, Result, SweepPoint, SweepResult
from worker.spec.models import Spec, parse_spec
from worker.spec.sweep import path_steps

#: The least time limit of a variant (the sweep's deadline has passed: it stops at once).
MIN_SHARE_S = 1e-3

#: Solves one variant: (spec, the neighbour's Result or None) -> its Result.
SolveOne = Callable[[Spec, Result | None], Result]


def variant(raw: dict[str, Any], path: str, value: Any) -> Spec:
    """The spec ``raw`` (without its sweep) with the field at ``path`` set to ``value``."""
    raw = copy.deepcopy(raw)
    raw.pop("sweep", None)
    _set(raw, path_steps(path), value, path, "")
    return parse_spec(raw)


def _set(node: Any, steps: list[str | int], value: Any, path: str, where: str) -> None:
    step, rest = steps[0], steps[1:]
    if step == "*":
        if not isinstance(node, list) or not node:
            raise SpecError.at("sweep.path", f"{path}: {where or 'the spec'} is not a "
                               "non-empty list, so [*] sets nothing")
        for k, element in enumerate(node):
            _set_child(node, k, element, rest, value, path, f"{where}[{k}]")
        return
    if isinstance(step, int):
        if not isinstance(node, list) or step >= len(node):
            raise SpecError.at("sweep.path", f"{path}: {where or 'the spec'} has no element "
                               f"{step}")
    elif not isinstance(node, dict):
        raise SpecError.at("sweep.path", f"{path}: {where or 'the spec'} has no field "
                           f"{step!r}")
    elif rest and step not in node:
        node[step] = {}     # a block left to its defaults; the spec's checks name a bad one
    child = node[step] if rest else None
    _set_child(node, step, child, rest, value, path,
               f"{where}.{step}" if isinstance(step, str) and where else
               f"{where}[{step}]" if isinstance(step, int) else step)


def _set_child(node: Any, step: str | int, child: Any, rest: list[str | int], value: Any,
               path: str, where: str) -> None:
    if rest:
        _set(child, rest, value, path, where)
    else:
        node[step] = value


def solve_sweep(model: Spec, solve_one: SolveOne, earlier: Result | None = None,
                time_limit_s: float | None = None) -> Result:
    """Every value's Result in order, each warm-started from the one before (the first from
    ``earlier``, or the spec's own warm start), all within ``time_limit_s`` (default the
    spec's ``solver.time_limit_s``); the returned Result is the first value's, with
    ``sweep`` holding all of them and the front."""
    sweep = model.sweep
    assert sweep is not None
    raw = model.model_dump(mode="json", exclude_unset=True)
    variants = [variant(raw, sweep.path, value) for value in sweep.values]
    points: list[SweepPoint] = []
    deadline = time.perf_counter() + (model.solver.time_limit_s if time_limit_s is None
                                      else time_limit_s)
    for k, (value, spec) in enumerate(zip(sweep.values, variants, strict=True)):
        earlier = solve_one(_within(spec, deadline, len(variants) - k), earlier)
        points.append(SweepPoint(value=value, result=earlier))
    _retry_unmet(points, variants, solve_one, deadline)
    first = points[0].result
    return first.model_copy(update={"sweep": SweepResult(
        path=sweep.path, points=points, front=[front_point(p) for p in points])})


def _retry_unmet(points: list[SweepPoint], variants: list[Spec], solve_one: SolveOne,
                 deadline: float) -> None:
    """Solve a point whose answer is not feasible once more, warm-started from the next
    point's feasible Result (its members join the shrinking LP's candidates: on a sweep
    towards stricter levels its answer meets this level too), within the time left; keep
    the new answer when it is feasible."""
    for k in range(len(points) - 2, -1, -1):
        later = points[k + 1].result
        if points[k].result.feasibility.feasible or not later.feasibility.feasible:
            continue
        again = solve_one(_within(variants[k], deadline, 1), later)
        if again.feasibility.feasible:
            points[k] = SweepPoint(value=points[k].value, result=again)


def _within(spec: Spec, deadline: float, left: int) -> Spec:
    """``spec`` with at most an equal share of the time left until ``deadline`` among the
    ``left`` variants still to solve (the sweep as a whole keeps ``solver.time_limit_s``)."""
    share = max((deadline - time.perf_counter()) / left, MIN_SHARE_S)
    if share >= spec.solver.time_limit_s:
        return spec
    return spec.model_copy(update={"solver": spec.solver.model_copy(
        update={"time_limit_s": share})})


def front_point(point: SweepPoint) -> FrontPoint:
    """The mixture's objective, error and largest violation at one value, on training and
    (when the spec has them) validation data."""
    result = point.result
    report = result.report
    training = report.training.models.get("mixture") if report else None
    validation = report.validation.models.get("mixture") \
        if report and report.validation else None
    return FrontPoint(
        value=point.value, objective=result.expected.objective,
        error=None if training is None else training.error,
        max_violation=result.expected.max_violation,
        validation_objective=None if validation is None else validation.objective,
        validation_error=None if validation is None else validation.error,
        validation_max_violation=None if validation is None else validation.max_violation)
