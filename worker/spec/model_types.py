"""The spec's ``model`` types: one pydantic model each, members of :data:`Model`.

Each type's compiler, memory estimate and scoring are its record in
:data:`worker.problem.model_types.MODEL_TYPES` (``tests/problem/test_model_types.py`` fails
while a member here has no record there). ``network`` says whether the network games must
train it (:attr:`worker.spec.models.Spec.network`) whatever the objective.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from worker.spec.strict import StrictModel

#: The most units of a hidden layer and hidden layers of a network (memory is bounded by the
#: job budget besides).
MAX_UNITS = 65_536
MAX_LAYERS = 16


class LinearModel(StrictModel):
    """Scores x.w (one output), or x W with W (d, K) for softmax_cross_entropy."""

    network: ClassVar[bool] = False

    type: Literal["linear"]


class MlpModel(StrictModel):
    """A network of dense layers (:mod:`worker.kernels.network`): ``hidden`` ReLU layers of
    the given widths, biases on every layer, weights initialized from ``init_seed``."""

    network: ClassVar[bool] = True

    type: Literal["mlp"]
    hidden: list[Annotated[int, Field(ge=1, le=MAX_UNITS)]] = Field(min_length=1,
                                                                    max_length=MAX_LAYERS)
    activation: Literal["relu"] = "relu"
    init_seed: int = Field(0, ge=0, lt=2**63)


Model = Annotated[LinearModel | MlpModel, Field(discriminator="type")]
