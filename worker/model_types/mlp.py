"""``mlp``: dense ReLU layers with biases (:mod:`worker.kernels.network`), trained by the
network games and described in the Result as a :class:`~worker.result.NetworkModel`."""

from __future__ import annotations

from worker.model_types.record import ModelType, as_given, deploy_network
from worker.problem.network import Network
from worker.result import NetworkModel
from worker.spec.model_types import MlpModel


def _layers(model: MlpModel, d: int, outputs: int) -> Network:
    """d, the hidden widths, K; biases on every layer."""
    return Network((d, *model.hidden, outputs), bias=True)


def _declared_parameters(model: MlpModel, d: int) -> int:
    """Every layer's weights and biases for one output (the first layer's only with d)."""
    widths = [d, *model.hidden, 1]
    return sum(a * b + b for a, b in zip(widths[:-1], widths[1:], strict=True))


RECORD = ModelType("mlp", MlpModel, NetworkModel, _declared_parameters, as_given,
                   deploy_network, _layers)
