"""``calibrated_linear`` on raw tables (docs/tables.md): bias + sum_j c_j(x_j), each c_j a
fixed calibrator whose outputs are parameters. It compiles by its lowering
(:func:`worker.tables.lower.lower_tables` with :class:`~worker.tables.model.LinearTable`)
to the linear problem over the calibrators' features; the Result describes it as a
:class:`~worker.result.CalibratedModel`, which scores raw rows."""

from __future__ import annotations

from functools import partial

from worker.model_types.record import ModelType, deploy_table
from worker.result import CalibratedModel
from worker.spec.tables import DEFAULT_KEYPOINTS, CalibratedLinear, TableFeature
from worker.tables.lower import lower_tables
from worker.tables.model import LinearTable


def outputs_asked(feature: TableFeature, keypoints: int) -> int:
    """The outputs a feature asks for: its listed keypoints or categories, K quantiles
    (``keypoints`` when it gives none; repeated quantiles may merge), and 1 for ``"auto"``
    categories until the table is read."""
    if feature.categorical:
        return len(feature.categories) if isinstance(feature.categories, list) else 1
    given = feature.keypoints
    return len(given) if isinstance(given, list) else (given or keypoints)


def _declared_parameters(model: CalibratedLinear, d: int) -> int:
    """The bias and every feature's outputs."""
    return 1 + sum(outputs_asked(feature, DEFAULT_KEYPOINTS) for feature in model.features)


RECORD = ModelType("calibrated_linear", CalibratedLinear, CalibratedModel,
                   _declared_parameters, partial(lower_tables, transform=LinearTable),
                   deploy_table(LinearTable))
