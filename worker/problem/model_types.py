"""The spec's model types, one :class:`ModelType` record each in :data:`MODEL_TYPES`.

A record says how a ``model`` block becomes the layer layout the network kernels score
(:class:`~worker.problem.network.Network`), how many parameters the spec alone fixes (the
memory estimate before any data are read, :func:`worker.pipeline.memory.declared_parts`) and
which initial seed it draws from. The compiler (:mod:`worker.problem.compile_network`), the
Result's ``model`` and :class:`worker.mixture.Mixture` read it from here; adding a model type
is its spec model in :mod:`worker.spec.model_types` and one record here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from worker.problem.network import Network
from worker.spec.model_types import LinearModel, MlpModel


@dataclass(frozen=True)
class ModelType:
    """One ``model.type`` of the spec: its name, its pydantic model in
    :mod:`worker.spec.model_types` (a member of ``Model``) and the three functions below."""

    name: str
    model: type[BaseModel]
    #: ``(model, d, K) -> Network``: the layout scoring rows of d features with K outputs.
    layers: Callable[[Any, int, int], Network]
    #: ``(model, d) -> int``: parameters the spec fixes, d the declared ``dimension`` (0 if
    #: none).
    declared_parameters: Callable[[Any, int], int]
    #: ``(sizes, bias) -> Network``: the layout a Result's ``model`` describes.
    from_result: Callable[[tuple[int, ...], bool], Network] = Network

    def init_seed(self, model: Any) -> int:
        """The seed of the initial parameters (0 when the type has none)."""
        return int(getattr(model, "init_seed", 0))


def _linear_layers(model: LinearModel, d: int, outputs: int) -> Network:
    """x W with W (d, K), no bias."""
    return Network((d, outputs), bias=False)


def _mlp_layers(model: MlpModel, d: int, outputs: int) -> Network:
    """d, the hidden widths, K; biases on every layer."""
    return Network((d, *model.hidden, outputs), bias=True)


def _mlp_parameters(model: MlpModel, d: int) -> int:
    """Every layer's weights and biases for one output (the first layer's only with d)."""
    widths = [d, *model.hidden, 1]
    return sum(a * b + b for a, b in zip(widths[:-1], widths[1:], strict=True))


MODEL_TYPES: dict[str, ModelType] = {record.name: record for record in (
    ModelType("linear", LinearModel, _linear_layers, lambda model, d: d),
    ModelType("mlp", MlpModel, _mlp_layers, _mlp_parameters),
)}
