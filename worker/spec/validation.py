"""The spec's ``validation`` block: held-out examples the Result's report is computed on
(docs/results.md). Either data of the objective's shape, or a share of the objective's rows
held out of training."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from worker.data.refs import MatrixValue, VectorValue
from worker.spec.strict import StrictModel, keyed_union


class ValidationData(StrictModel):
    """Held-out ``features`` (and ``labels``, unless the features file carries them), and
    ``groups`` of the same names as ``objective.data.groups``."""

    model_config = ConfigDict(title="ValidationData")

    features: MatrixValue
    labels: VectorValue | None = None
    groups: dict[str, VectorValue] | None = None


class ValidationSplit(StrictModel):
    """Hold out ``fraction`` of the objective's rows, drawn by numpy's PCG64 seeded with
    ``seed`` (a permutation: the first round(fraction n) rows of it are held out); training
    uses the rest."""

    fraction: float = Field(gt=0.0, lt=1.0, allow_inf_nan=False)
    seed: int = Field(0, ge=0, lt=2**63)


Validation = keyed_union("fraction", ValidationSplit, ValidationData)
