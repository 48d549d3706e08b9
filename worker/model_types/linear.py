"""``linear``: x.w, or x W with W (d, K) for K scores; no bias. The compilers score it as
given; trained as a network (K scores, a robust objective) a Result describes it as a
:class:`~worker.result.NetworkModel`, otherwise it has no ``model`` and scores x.w."""

from __future__ import annotations

from worker.model_types.record import ModelType, as_given, deploy_network
from worker.problem.network import Network
from worker.result import NetworkModel
from worker.spec.model_types import LinearModel


def _layers(model: LinearModel, d: int, outputs: int) -> Network:
    """x W with W (d, K), no bias."""
    return Network((d, outputs), bias=False)


RECORD = ModelType("linear", LinearModel, NetworkModel, lambda model, d: d, as_given,
                   deploy_network, _layers)
