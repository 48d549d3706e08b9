"""``calibrated_linear`` on raw tables (docs/tables.md): bias + sum_j c_j(x_j), each c_j a
fixed calibrator whose outputs are parameters. It compiles by its lowering
(:func:`worker.tables.lower.lower_tables` with :class:`~worker.tables.model.LinearTable`)
to the linear problem over the calibrators' features; the Result describes it as a
:class:`~worker.result.CalibratedModel`, which scores raw rows."""

from __future__ import annotations

from functools import partial

from worker.model_types.record import ModelType, deploy_table
from worker.result import CalibratedModel
from worker.spec.tables import CalibratedLinear, TableFeature
from worker.tables.lower import lower_tables
from worker.tables.model import LinearTable


def fewest_outputs(feature: TableFeature) -> int:
    """The fewest outputs a feature may have once its table is read: its listed keypoints
    or categories; 2 for quantile keypoints (repeated quantiles merge) and 1 for
    ``"auto"`` categories."""
    if feature.categorical:
        return len(feature.categories) if isinstance(feature.categories, list) else 1
    return len(feature.keypoints) if isinstance(feature.keypoints, list) else 2


def _declared_parameters(model: CalibratedLinear, d: int) -> int:
    """The bias and every feature's fewest outputs (the declared estimate is a lower bound
    of the compiled one)."""
    return 1 + sum(fewest_outputs(feature) for feature in model.features)


RECORD = ModelType("calibrated_linear", CalibratedLinear, CalibratedModel,
                   _declared_parameters, partial(lower_tables, transform=LinearTable),
                   deploy_table(LinearTable))
