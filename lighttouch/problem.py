"""From an estimator's parameters and its training arrays to a problem spec.

The estimators of :mod:`lighttouch.estimators` fit by solving one spec (docs/spec.md):
an ``empirical_risk`` objective (or, with the classifier's ``objective=``, a ``rate``
objective) over the features (with a column of ones appended when ``fit_intercept``), the
labels, and the groups of the sensitive features; the
constraints as given, a rate term's ``"group": "*"`` expanded to one constraint per group
(errors name the caller's constraint and the group, not the expanded list's index);
``solver`` built from the algorithm, iterations, seed and any further solver options.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from worker.errors import SpecError

#: A rate term's group that stands for every group of the sensitive features in turn.
EVERY_GROUP = "*"


@dataclass(frozen=True)
class Groups:
    """Named groups of examples: name -> 0/1 vector (n,)."""

    members: dict[str, np.ndarray]

    @classmethod
    def of(cls, sensitive: Any, n: int) -> Groups:
        """One group per value of each sensitive feature: ``value`` for one feature (n,),
        ``column=value`` for several (a DataFrame's column names, else 0, 1, ...)."""
        if sensitive is None:
            return cls({})
        columns = _columns(sensitive)
        groups = {}
        for column, values in columns.items():
            values = np.asarray(values)
            if values.shape != (n,):
                raise ValueError(f"sensitive_features has {values.shape[0]} rows; X has {n}")
            for value in map(str, np.unique(values.astype(str))):
                name = value if len(columns) == 1 else f"{column}={value}"
                groups[name] = (values.astype(str) == value).astype(np.float64)
        return cls(groups)


def _columns(sensitive: Any) -> dict[str, Any]:
    """The columns of sensitive features: a Series or vector is one, a DataFrame or 2-D
    array several."""
    if hasattr(sensitive, "columns"):
        return {str(name): sensitive[name].to_numpy() for name in sensitive.columns}
    array = np.asarray(sensitive)
    if array.ndim == 1:
        return {"0": array}
    if array.ndim == 2:
        return {str(j): array[:, j] for j in range(array.shape[1])}
    raise ValueError(f"sensitive_features must be 1-D or 2-D, got {array.ndim} dimensions")


def expand_constraints(constraints: Any, groups: Groups) -> list[dict]:
    """The constraints with each rate term's ``"group": "*"`` replaced by every group in
    turn (one constraint per group); ValueError naming a group no sensitive feature has."""
    return [constraint for _, constraint in _expanded(constraints, groups)]


def user_constraints(constraints: Any, groups: Groups) -> list[tuple[int, str]]:
    """Each expanded constraint's index in the caller's own list, and the group a ``"*"``
    constraint became there ("" for a constraint as given)."""
    return [origin for origin, _ in _expanded(constraints, groups)]


def in_user_terms(error: SpecError, origins: list[tuple[int, str]]) -> SpecError:
    """``error`` with the expanded constraints' paths (``constraints[i]``) named as the
    caller wrote them (``origins``, from :func:`user_constraints`): ``constraints[k]``, and
    the group when the issue is not the same for every group of a ``"*"`` constraint."""
    renamed: dict[tuple[str, str], list[str]] = {}
    for path, message in error.issues:
        match = re.match(r"constraints\[(\d+)\]", path)
        group = ""
        if match is not None and int(match.group(1)) < len(origins):
            k, group = origins[int(match.group(1))]
            path = f"constraints[{k}]{path[match.end():]}"
        renamed.setdefault((path, message), []).append(group)
    return SpecError([(f"{path} (group {groups[0]!r})" if len(groups) == 1 and groups[0]
                       else path, message) for (path, message), groups in renamed.items()])


def constraint_dicts(constraints: Any) -> list[tuple[int, dict[str, Any]]]:
    """(the caller's index, spec constraint) of each constraint given as one criterion of
    :mod:`lighttouch.fairness`, a spec dict, or a list of both (a criterion stands for the
    dicts of its ``to_spec()``)."""
    if constraints is None:
        return []
    items = constraints if isinstance(constraints, list | tuple) else [constraints]
    flat = []
    for k, item in enumerate(items):
        if hasattr(item, "to_spec"):
            flat += [(k, constraint) for constraint in item.to_spec()]
        elif isinstance(item, dict):
            flat.append((k, item))
        else:
            raise ValueError(f"constraints[{k}]: give a spec constraint (a dict) or a "
                             "criterion of lighttouch.fairness, got "
                             f"{type(item).__name__}")
    return flat


def _with_groups(constraint: dict[str, Any]) -> list[dict[str, Any]]:
    """Every dict of ``constraint`` that names a group: the constraint itself (a group
    loss), each side that is a rate term, and each term of a side that is a sum."""
    found = [constraint] if "group" in constraint else []
    for side in (constraint.get("lhs"), constraint.get("rhs")):
        if isinstance(side, dict):
            terms = side.get("terms") if "terms" in side else [side]
            found += [t for t in terms if isinstance(t, dict)] \
                if isinstance(terms, list) else []
    return found


def _expanded(constraints: Any, groups: Groups) -> list[tuple[tuple[int, str], dict]]:
    """((the caller's index, the group of a "*" or ""), constraint) of every expanded one."""
    expanded = []
    for k, constraint in constraint_dicts(constraints):
        named = {term.get("group") for term in _with_groups(constraint)}
        for name in named - {None, EVERY_GROUP}:
            if constraint.get("data") is None and name not in groups.members:
                raise ValueError(f"constraints[{k}] names group {name!r}; the sensitive "
                                 f"features give {sorted(groups.members) or 'no groups'}")
        if EVERY_GROUP not in named:
            expanded.append(((k, ""), copy.deepcopy(constraint)))
            continue
        if not groups.members:
            raise ValueError(f"constraints[{k}] uses group '*' but fit got no "
                             "sensitive_features")
        for name in groups.members:
            copied = copy.deepcopy(constraint)
            for term in _with_groups(copied):
                if term.get("group") == EVERY_GROUP:
                    term["group"] = name
            expanded.append(((k, name), copied))
    return expanded


def with_intercept(features: Any, fit_intercept: bool) -> Any:
    """``features`` (n, d) with a column of ones appended (n, d + 1) when ``fit_intercept``."""
    if not fit_intercept:
        return features
    ones = np.ones((features.shape[0], 1))
    if sp.issparse(features):
        return sp.hstack([features, sp.csr_matrix(ones)], format="csr")
    return np.hstack([features, ones])


def bounds_block(bounds: Any) -> dict[str, Any]:
    """The spec's ``bounds`` from ``None`` (unbounded), ``b`` ([-b, b]) or ``(lower, upper)``."""
    if bounds is None:
        return {}
    if np.isscalar(bounds):
        return {"lower": -float(bounds), "upper": float(bounds)}
    lower, upper = bounds
    return {"lower": lower, "upper": upper}


def rate_objective(params: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The spec's ``rate`` objective of an estimator's ``objective`` (a metric's name, or
    ``{"metric": ..., "group": ...}``) on ``data``; ValueError for parameters it leaves
    unused (a loss, l1, l2)."""
    chosen = params["objective"]
    unused = [name for name in ("loss", "l1", "l2") if params[name]]
    if unused:
        raise ValueError(f"objective={chosen!r} minimizes a rate, which {', '.join(unused)} "
                         "would not change; leave them at their defaults")
    if isinstance(chosen, str):
        chosen = {"metric": chosen}
    if not isinstance(chosen, dict):
        raise ValueError("objective is a rate metric's name (e.g. 'false_positive_rate') or "
                         f"a dict with 'metric' and 'group', got {type(chosen).__name__}")
    return {"type": "rate", **chosen, "data": data}


def build_spec(params: dict[str, Any], features: Any, labels: np.ndarray, groups: Groups,
               *, loss: str, classes: int | None = None,
               weights: np.ndarray | None = None) -> dict[str, Any]:
    """The spec an estimator with ``params`` (its ``get_params()``) solves on the arrays,
    each row weighing ``weights`` (n,) in the loss and the rates (None: 1)."""
    model = params["model"]
    objective = {"type": "empirical_risk", "loss": loss, "l1": float(params["l1"]),
                 "l2": float(params["l2"]),
                 "data": {"features": features, "labels": labels}}
    if params.get("objective") is not None:
        objective = rate_objective(params, objective["data"])
    if groups.members:
        objective["data"]["groups"] = groups.members
    if weights is not None:
        objective["data"]["weights"] = weights
    if classes is not None:
        objective["classes"] = classes
    solver = {"algorithm": params["algorithm"], "iterations": params["iterations"],
              "seed": int(params["random_state"]), **(params["solver"] or {})}
    return {"spec_version": 1,
            "model": {"type": model} if isinstance(model, str) else dict(model),
            "bounds": bounds_block(params["bounds"]), "objective": objective,
            "constraints": expand_constraints(params["constraints"], groups),
            "solver": solver, "output": {"mixture": True}}
