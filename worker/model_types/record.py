"""What one model type is: a :class:`ModelType` record (the registry is
:data:`worker.model_types.MODEL_TYPES`).

A record owns its spec model, how a spec with it compiles (:attr:`ModelType.lower`: the
spec as the engine's compilers take it, and, for a network, :attr:`ModelType.layers`), the
parameters the spec fixes before any data are read (the memory estimate), how the Result
describes it (:attr:`ModelType.description`, and :meth:`Lowering.describe`) and how a
Result's model scores new rows (:attr:`ModelType.deploy`, for
:class:`worker.mixture.Mixture`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel

from worker.problem.compile import DataSource
from worker.problem.network import Network
from worker.result import NetworkModel
from worker.spec.models import Spec
from worker.tables.model import TableModel


class Lowering(Protocol):
    """A spec as the engine's compilers take it (a model they score: ``linear`` or a
    network), the data source its references resolve through, and the Result's model."""

    spec: Spec
    source: DataSource

    def describe(self, solution: np.ndarray) -> BaseModel | None:
        """The Result's ``model`` under the deployed ``solution`` (d,); None: the compiled
        problem describes it (a network), or there is nothing to describe (x.w)."""
        ...


@dataclass(frozen=True)
class AsGiven:
    """A spec the compilers take as it is (:class:`Lowering`)."""

    spec: Spec
    source: DataSource

    def describe(self, solution: np.ndarray) -> None:
        """Nothing beyond what the compiled problem states."""
        return None


def as_given(spec: Spec, source: DataSource) -> AsGiven:
    """The lowering of a model the compilers score directly."""
    return AsGiven(spec, source)


@dataclass(frozen=True)
class Deployment:
    """How a Result's model scores: the network its solutions parameterize (None: x.w) and
    the transform of raw table rows into its features (None: features come as a matrix)."""

    network: Network | None = None
    rows: TableModel | None = None


def deploy_network(model: NetworkModel) -> Deployment:
    """The network a Result's :class:`~worker.result.NetworkModel` describes."""
    return Deployment(network=Network(tuple(model.sizes), model.bias))


def deploy_table(transform: type[TableModel]) -> Callable[[Any], Deployment]:
    """How a Result's :class:`~worker.result.CalibratedModel` scores raw rows through the
    ``transform`` it describes."""
    return lambda model: Deployment(rows=transform.from_result(model))


@dataclass(frozen=True)
class ModelType:
    """One ``model.type`` of the spec."""

    name: str
    #: Its pydantic model, a member of the spec's ``Model`` union.
    model: type[BaseModel]
    #: The class of the Result's ``model`` describing it (:mod:`worker.result`); its
    #: ``type`` enum lists this record's name.
    description: type[BaseModel]
    #: ``(model, d) -> int``: parameters the spec fixes, d the declared ``dimension`` (0 if
    #: none): the state the memory estimate counts before any data are read.
    declared_parameters: Callable[[Any, int], int]
    #: ``(spec, source) -> Lowering``: the spec the compilers take.
    lower: Callable[[Spec, DataSource], Lowering]
    #: ``(result model) -> Deployment``: how a Result's ``model`` scores rows.
    deploy: Callable[[Any], Deployment]
    #: ``(model, d, K) -> Network``: the layout scoring rows of d features with K outputs
    #: when the network games train it; None when it is lowered to another model first.
    network_layers: Callable[[Any, int, int], Network] | None = None

    def layers(self, model: Any, d: int, outputs: int) -> Network:
        """The network of ``model`` over d features with K ``outputs``."""
        if self.network_layers is None:
            raise TypeError(f"{self.name} is lowered before it is compiled; it has no layers")
        return self.network_layers(model, d, outputs)

    def init_seed(self, model: Any) -> int:
        """The seed of the initial parameters (0 when the type has none)."""
        return int(getattr(model, "init_seed", 0))
