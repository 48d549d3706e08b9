"""The spec's ``model`` types: one pydantic model each, members of :data:`Model`.

Each type's compiler, memory estimate, Result description and scoring are its record in
:data:`worker.model_types.MODEL_TYPES` (``tests/problem/test_model_types.py`` fails while a
member here has no record there). ``network`` says whether the network games must train it
(:attr:`worker.spec.models.Spec.network`) whatever the objective; ``reads_tables`` that it
scores raw table rows (:mod:`worker.spec.tables`), and the Result describes it as a
calibrated model rather than a network (:func:`type_names`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union, get_args

from pydantic import Field

from worker.spec.strict import StrictModel
from worker.spec.tables import CalibratedLattice, CalibratedLinear

#: The most units of a hidden layer and hidden layers of a network (memory is bounded by the
#: job budget besides).
MAX_UNITS = 65_536
MAX_LAYERS = 16


class LinearModel(StrictModel):
    """Scores x.w (one output), or x W with W (d, K) for softmax_cross_entropy."""

    network: ClassVar[bool] = False
    reads_tables: ClassVar[bool] = False

    type: Literal["linear"]


class MlpModel(StrictModel):
    """A network of dense layers (:mod:`worker.kernels.network`): ``hidden`` ReLU layers of
    the given widths, biases on every layer, weights initialized from ``init_seed``."""

    network: ClassVar[bool] = True
    reads_tables: ClassVar[bool] = False

    type: Literal["mlp"]
    hidden: list[Annotated[int, Field(ge=1, le=MAX_UNITS)]] = Field(min_length=1,
                                                                    max_length=MAX_LAYERS)
    activation: Literal["relu"] = "relu"
    init_seed: int = Field(0, ge=0, lt=2**63)


#: Every model type's spec model, in the order of the spec's ``model`` union.
MODELS = (LinearModel, MlpModel, CalibratedLinear, CalibratedLattice)

#: The spec's ``model``.
Model = Annotated[Union[MODELS], Field(discriminator="type")]  # noqa: UP007


def type_names(reads_tables: bool) -> tuple[str, ...]:
    """The ``type`` of every model that reads raw tables (or of every one that does not),
    in :data:`MODELS` order: the Result's ``model.type`` enums (:mod:`worker.result`)."""
    return tuple(get_args(model.model_fields["type"].annotation)[0] for model in MODELS
                 if model.reads_tables == reads_tables)
