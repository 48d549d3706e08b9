"""Spec → :class:`~worker.problem.network.NetworkProblem`: read each objective term's
examples, check labels against the head, size the network, compile the box, the rates and the
group losses.

Errors name the JSON path: ``objective.terms[2].data.labels[17]: 10 is not a class index
0..9``.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from worker.data.labels import checked_labels, label_kind
from worker.errors import SpecError
from worker.kernels.network import SOFTMAX
from worker.losses import LOSSES, SOFTMAX_CROSS_ENTROPY
from worker.problem.compile import DataSource, box_bounds, risk_examples
from worker.problem.compile_group_loss import compile_group_losses
from worker.problem.compile_rates import compile_rates
from worker.problem.compiled import Objective
from worker.problem.network import Network, NetworkProblem, Term
from worker.problem.weights import example_weights, mean_one
from worker.spec.models import EmpiricalRisk, MaxOf, Spec


class Layout(Protocol):
    """What a model type says of its network (its record in
    :data:`worker.model_types.MODEL_TYPES`): the layers scoring rows of d features with K
    outputs, and the seed of the initial parameters."""

    def layers(self, model: Any, d: int, outputs: int) -> Network:
        """The layout of ``model`` (the spec's ``model`` block)."""
        ...

    def init_seed(self, model: Any) -> int:
        """The seed of ``model``'s initial parameters."""
        ...


def compile_network_problem(spec: Spec, source: DataSource, layout: Layout) -> NetworkProblem:
    """Read the data of a :attr:`~worker.spec.models.Spec.network` spec and build it, its
    network as the model type's ``layout`` says."""
    robust = isinstance(spec.objective, MaxOf)
    paths = [f"objective.terms[{i}]" for i in range(len(spec.terms))] if robust \
        else ["objective"]
    read = [risk_examples(term, path, source) for term, path in zip(spec.terms, paths, strict=True)]
    d = _width(spec, read, paths)
    multiclass = spec.terms[0].loss == SOFTMAX_CROSS_ENTROPY
    classes = _classes(spec, read, paths) if multiclass else 1
    terms = [Term(features, _labels(term, labels, path, classes),
                  SOFTMAX if multiclass else LOSSES[term.loss].code, term.l1, term.l2,
                  _weights(term, features.shape[0], path, source))
             for term, (features, labels), path in zip(spec.terms, read, paths, strict=True)]
    network = layout.layers(spec.model, d, classes)
    lower, upper = box_bounds(spec, network.parameters, source)
    first = terms[0]  # the examples a rate constraint without its own data counts on
    rates = compile_rates(spec, Objective(first.code, first.features, first.labels,
                                          sp.csr_matrix((0, 0)), np.zeros(0),
                                          weights=first.weights), source, d)
    bounded = compile_group_losses(spec, (*read[0], first.weights), source, d)
    return NetworkProblem(network, terms, robust, lower, upper, rates,
                          init_seed=layout.init_seed(spec.model), bounded=bounded)


def _weights(term: EmpiricalRisk, n: int, path: str, source: DataSource) -> np.ndarray | None:
    """The term's example weights of mean 1 (None without them), checked at their path."""
    return mean_one(example_weights(getattr(term.data, "weights", None), n,
                                    f"{path}.data.weights", source))


def _width(spec: Spec, read: list, paths: list[str]) -> int:
    """d: every term's columns, and ``dimension`` if given, agree."""
    d = read[0][0].shape[1]
    for (features, _), path in zip(read, paths, strict=True):
        if features.shape[1] != d:
            raise SpecError.at(f"{path}.data.features", f"{features.shape[1]} columns but "
                               f"{paths[0]}.data.features has {d}; every term scores the "
                               "same features")
    if spec.dimension is not None and spec.dimension != d:
        raise SpecError.at("dimension", f"the data have {d} features but dimension is "
                           f"{spec.dimension}; with this model dimension counts features")
    return d


def _classes(spec: Spec, read: list, paths: list[str]) -> int:
    """K: ``classes`` if given, else the largest label + 1 over every term."""
    declared = spec.terms[0].classes
    if declared is not None:
        return declared
    largest = max(float(np.max(labels)) for _, labels in read)
    if not np.isfinite(largest) or largest < 1:
        raise SpecError.at(f"{paths[0]}.data.labels", "softmax_cross_entropy needs class "
                           "indices 0..K-1 with K >= 2; give at least two classes or set "
                           "classes")
    return int(largest) + 1


def _labels(term: EmpiricalRisk, labels: np.ndarray, path: str, classes: int) -> np.ndarray:
    """Labels as the head takes them: class indices 0..K-1, or the binary loss's rule."""
    if term.loss != SOFTMAX_CROSS_ENTROPY:
        return checked_labels(labels, label_kind(term.loss), f"{path}.data",
                              f"{path}.data.labels")
    bad = np.flatnonzero(~np.isfinite(labels) | (labels != np.round(labels))
                         | (labels < 0) | (labels >= classes))
    if bad.size:
        i = int(bad[0])
        raise SpecError.at(f"{path}.data.labels[{i}]", f"{float(labels[i])!r} is not a class "
                           f"index 0..{classes - 1}; give integer labels below classes "
                           f"({classes})")
    return np.ascontiguousarray(labels, dtype=np.float64)
