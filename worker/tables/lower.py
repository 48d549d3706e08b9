"""Lowering: a spec with a calibrated model over raw tables → the engine's hand-built spec
(linear model, feature matrices, constraint blocks, 0/1 group vectors) and a data source
that hands those arrays to :func:`worker.problem.compile.compile_problem`.

The lowered spec is exactly what a user would write by hand with the same matrices in
files: the algorithms, shrinking, projection and bound see an ordinary linear problem. The
arrays stand in the spec as references no reader opens (:func:`placeholder`); only
:class:`LoweredSource` resolves them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from worker.data.refs import DataRef
from worker.errors import DataError
from worker.losses import PAIRWISE_HINGE
from worker.problem.compile import DataSource
from worker.result import CalibratedModel
from worker.spec.models import EmpiricalRisk, ExampleData, LinearModel, PairData, Spec
from worker.spec.tables import LabelColumn, is_calibrated
from worker.tables.columns import Table
from worker.tables.groups import group_mask
from worker.tables.lattice import LatticeTable
from worker.tables.model import LinearTable, TableModel
from worker.tables.read import read_table

# Both transforms are imported here so that fit_model's default finds every TableModel.
__all__ = ["LatticeTable", "LinearTable", "Lowered", "LoweredSource", "fit_model",
           "hand_built", "label_column", "label_values", "lower_tables", "no_positive_row",
           "placeholder", "table_columns", "table_model"]

#: The URI prefix of an array the lowering holds (never read from anywhere).
PLACEHOLDER = "data:application/x-npy;lowered="


def placeholder(path: str) -> DataRef:
    """The reference standing for the lowered array of JSON ``path``."""
    return DataRef(uri=f"{PLACEHOLDER}{path},", format="npy")


class LoweredSource(DataSource):
    """A data source that returns the lowering's arrays for their placeholders."""

    def __init__(self, base: DataSource, arrays: dict[str, object]):
        super().__init__(base.roots, base.settings, base.stats)
        self.arrays = arrays

    def _held(self, value):
        return self.arrays.get(value.uri) if isinstance(value, DataRef) else None

    def matrix(self, value, path: str):
        """The lowered matrix, or what the data layer reads."""
        held = self._held(value)
        return super().matrix(value, path) if held is None else held

    def vector(self, value, path: str, allow_infinite: bool = False) -> np.ndarray:
        """The lowered vector, or what the data layer reads."""
        held = self._held(value)
        return super().vector(value, path, allow_infinite) if held is None else held

    def examples(self, features, labels, path: str):
        """The lowered features and labels."""
        if self._held(features) is None:
            return super().examples(features, labels, path)
        return self._held(features), self._held(labels)


@dataclass(frozen=True)
class Lowered:
    """A calibrated model's spec as the engine takes it, its arrays, and the model."""

    spec: Spec
    source: DataSource
    model: TableModel

    def describe(self, solution: np.ndarray) -> CalibratedModel:
        """The Result's model under the deployed ``solution`` (d,)."""
        return self.model.describe(solution)


def lower_tables(spec: Spec, source: DataSource,
                 transform: type[TableModel] | None = None) -> Lowered | None:
    """The hand-built equivalent of a spec with a calibrated model; None for other specs.

    Reads the tables (only the columns used), fits the ``transform`` (the model type's, by
    default the one serving ``spec.model``) on the training rows (every row alike, whatever
    its weight), computes the feature rows, labels and groups, keeps the pairs' weights as
    the spec gives them, and appends the model's constraint blocks after the spec's own.

    Raises
    ------
    DataError
        A table cannot be read or a column does not hold what the model needs (the message
        names the JSON path, the column and the row).
    """
    if not is_calibrated(spec.model):
        return None
    objective = spec.objective
    assert isinstance(objective, EmpiricalRisk)
    data, arrays = objective.data, {}
    pairwise = objective.loss == PAIRWISE_HINGE
    paths = ["positive", "negative"] if pairwise else ["table"]
    tables = [_read(spec, getattr(data, name), f"objective.data.{name}", source)
              for name in paths]
    model = fit_model(spec, tables, transform)
    lowered = {name: placeholder(f"objective.data.{name}") for name in paths}
    for name, table in zip(paths, tables, strict=True):
        arrays[lowered[name].uri] = model.features(table)
    if not pairwise:
        labels = placeholder("objective.data.label")
        arrays[labels.uri] = table_labels(data.label, tables[0], "objective.data.label")
        lowered = {"features": lowered["table"], "labels": labels}
    groups = {}
    for name, group in (data.groups or {}).items():
        if isinstance(group, DataRef | list):
            groups[name] = group
            continue
        groups[name] = placeholder(f"objective.data.groups.{name}")
        arrays[groups[name].uri] = group_mask(group, tables[0]).astype(np.float64)
    data_type = ExampleData if "features" in lowered else PairData
    weights = getattr(data, "weights", None)  # one per pair; a table has none
    return Lowered(hand_built(spec, data_type(**lowered, groups=groups or None,
                                              weights=weights), model),
                   LoweredSource(source, arrays), model)


def hand_built(spec: Spec, data: ExampleData | PairData, model: TableModel) -> Spec:
    """The spec a user would write by hand for a calibrated ``spec``: the linear model over
    ``data`` (the feature rows' references), the spec's constraints and the blocks the
    ``model``'s features ask for."""
    risk = spec.objective.model_copy(update={"data": data})
    return spec.model_copy(update={"model": LinearModel(type="linear"), "objective": risk,
                                   "constraints": [*spec.constraints, *model.constraints()]})


def fit_model(spec: Spec, tables: list[Table],
              transform: type[TableModel] | None = None) -> TableModel:
    """The calibrated model's fixed transform, fitted on the training tables; ``transform``
    defaults to the :class:`~worker.tables.model.TableModel` whose ``kind`` is the model's
    type (the model type's record passes its own)."""
    return (transform or table_model(spec.model.type)).fit(spec.model, tables)


def table_model(kind: str) -> type[TableModel]:
    """The :class:`~worker.tables.model.TableModel` serving the model type ``kind``."""
    return next(t for t in TableModel.__subclasses__() if t.kind == kind)


def table_columns(spec: Spec) -> list[str]:
    """Every column a calibrated spec reads: features, the label, the groups'."""
    objective = spec.objective
    columns = [feature.column for feature in spec.model.features]
    label = getattr(objective.data, "label", None)
    if label is not None:
        columns.append(label_column(label))
    pending = list((objective.data.groups or {}).values())
    while pending:
        group = pending.pop()
        if hasattr(group, "all_of"):
            pending.extend(group.all_of)
        elif hasattr(group, "column"):
            columns.append(group.column)
    return list(dict.fromkeys(columns))


def _read(spec: Spec, ref: DataRef, path: str, source: DataSource) -> Table:
    """The columns the spec uses of the table ``ref``, under the source's roots and data
    settings (which the caller resolved: :func:`worker.settings.data_settings`)."""
    if source.settings is None:
        raise ValueError("a calibrated model's tables are read under the job's data "
                         "settings; give the DataSource its settings (data_settings())")
    return read_table(ref, table_columns(spec), path, roots=source.roots,
                      settings=source.settings, stats=source.stats)


def table_labels(label, table: Table, path: str) -> np.ndarray:
    """Labels (n,) of the whole training table (:func:`label_values`), of which a column's
    positive values must label at least one row; refusals name ``path``."""
    labels = label_values(label, table, path)
    if isinstance(label, LabelColumn) and not labels.any():
        raise no_positive_row(label, path)
    return labels


def no_positive_row(label: LabelColumn, path: str) -> DataError:
    """The refusal of a label column none of whose rows holds one of its ``positive``
    values, at JSON ``path``."""
    texts = [str(value) for value in label.positive]
    return DataError(path, f"no row of column {label.column!r} holds one of {texts}; list "
                           "the positive classes as the column writes them")


def label_values(label, table: Table, path: str) -> np.ndarray:
    """Labels (n,) of some rows: a numeric column's values, or 1 where a column holds one
    of the positive values and 0 elsewhere (classification losses read 0 as -1); refusals
    name ``path``."""
    if isinstance(label, LabelColumn):
        texts = pa.array([str(value) for value in label.positive], pa.string())
        positive = pc.is_in(table.text(label.column), value_set=texts)
        return np.asarray(positive.to_numpy(zero_copy_only=False), dtype=np.float64)
    try:
        return table.numbers(label, "; name the positive classes with "
                                    "{\"column\": ..., \"positive\": [...]}")
    except DataError as error:
        raise DataError(path, error.message) from None


def label_column(label) -> str:
    """The column a table label (a column's name or a :class:`LabelColumn`) reads."""
    return label if isinstance(label, str) else label.column
