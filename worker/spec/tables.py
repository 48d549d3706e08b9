"""The spec's models on raw tables (docs/tables.md): calibrated linear and calibrated
lattice models, their features by column name, labels and groups by column.

A calibrated model reads ``objective.data.table`` (and ``label``) or, for
``pairwise_hinge``, the tables ``data.positive`` and ``data.negative``;
:mod:`worker.tables.lower` turns the spec into the engine's hand-built spec. The checks here
need no data; those that do (columns present, values numeric, categories seen) happen when
the tables are read, naming the JSON path, the column and the row.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, Strict, model_validator

from worker.data.refs import DataRef, VectorValue
from worker.spec.strict import StrictModel

#: The most keypoints of one calibrator, categories of one feature, features of one model.
MAX_KEYPOINTS = 10_000
MAX_CATEGORIES = 10_000
MAX_FEATURES = 1_024
#: The most vertices of a calibrated lattice (4,194,304).
MAX_LATTICE_VERTICES = 2**22
#: Keypoints of a calibrated linear model's numeric feature when the spec gives none.
DEFAULT_KEYPOINTS = 10

ColumnName = Annotated[str, Strict(), Field(min_length=1)]
Category = Annotated[str, Strict()] | Annotated[int, Strict()]
Number = Annotated[float, Field(allow_inf_nan=False)]


class TableFeature(StrictModel):
    """One input of a calibrated model: a numeric column with a piecewise-linear calibrator
    (``keypoints``: a list, or K quantiles of the training column), or a categorical column
    (``categories``) with one parameter per category."""

    column: ColumnName
    keypoints: list[Number] | Annotated[int, Field(ge=2, le=MAX_KEYPOINTS)] | None = None
    monotonic: Literal["increasing", "decreasing", "none"] = "none"
    convexity: Literal["convex", "concave", "none"] = "none"
    categories: Literal["auto"] | list[Category] | None = None
    monotonic_order: list[Category] | None = None

    @property
    def categorical(self) -> bool:
        """Whether the feature has one parameter per category."""
        return self.categories is not None

    @model_validator(mode="after")
    def _consistent(self) -> TableFeature:
        return self._check_categorical() if self.categorical else self._check_numeric()

    def _check_numeric(self) -> TableFeature:
        where = f"column {self.column!r}"
        if self.monotonic_order is not None:
            raise ValueError(f"{where}: monotonic_order orders categories; give "
                             "\"categories\" too, or use monotonic on a numeric column")
        keypoints = self.keypoints
        if isinstance(keypoints, list):
            if not 2 <= len(keypoints) <= MAX_KEYPOINTS:
                raise ValueError(f"{where}: give 2 to {MAX_KEYPOINTS:,} keypoints, got "
                                 f"{len(keypoints)}")
            for k in range(1, len(keypoints)):
                if not keypoints[k] > keypoints[k - 1]:
                    raise ValueError(f"{where}: keypoints[{k}] = {keypoints[k]} is not above "
                                     f"keypoints[{k - 1}] = {keypoints[k - 1]}; keypoints "
                                     "must increase strictly")
        return self

    def _check_categorical(self) -> TableFeature:
        where = f"column {self.column!r}"
        if self.keypoints is not None or self.convexity != "none":
            raise ValueError(f"{where}: a categorical feature (categories given) has no "
                             "keypoints or convexity; drop them, or drop categories")
        if self.monotonic != "none" and self.monotonic_order is None:
            raise ValueError(f"{where}: monotonic on a categorical feature needs an order "
                             "of its categories; give monotonic_order (lowest first)")
        order = self.monotonic_order or []
        if len(set(order)) != len(order):
            raise ValueError(f"{where}: monotonic_order lists a category twice")
        if isinstance(self.categories, list):
            if not 1 <= len(self.categories) <= MAX_CATEGORIES:
                raise ValueError(f"{where}: give 1 to {MAX_CATEGORIES:,} categories")
            if len(set(self.categories)) != len(self.categories):
                raise ValueError(f"{where}: categories lists a category twice")
            unknown = [c for c in order if c not in self.categories]
            if unknown:
                raise ValueError(f"{where}: monotonic_order names {unknown[0]!r}, which is "
                                 "not one of the categories")
        return self


Features = Annotated[list[TableFeature], Field(min_length=1, max_length=MAX_FEATURES)]


def _no_column_twice(features: list[TableFeature]) -> None:
    seen: set[str] = set()
    for feature in features:
        if feature.column in seen:
            raise ValueError(f"column {feature.column!r} is a feature twice; list it once")
        seen.add(feature.column)


class CalibratedLinear(StrictModel):
    """f(x) = bias + sum_j c_j(x_j): a calibrator per column, their outputs the parameters."""

    network: ClassVar[bool] = False
    reads_tables: ClassVar[bool] = True

    type: Literal["calibrated_linear"]
    features: Features

    @model_validator(mode="after")
    def _distinct(self) -> CalibratedLinear:
        _no_column_twice(self.features)
        return self


class Lattice(StrictModel):
    """The lattice of a calibrated lattice model: its size along each feature (one number:
    every feature) and the interpolation onto its vertices."""

    sizes: Annotated[int, Field(ge=2, le=MAX_LATTICE_VERTICES)] | \
        list[Annotated[int, Field(ge=2, le=MAX_LATTICE_VERTICES)]] = 2
    interpolation: Literal["simplex"] = "simplex"


class CalibratedLattice(StrictModel):
    """Each input mapped onto a lattice axis (a numeric column by a fixed piecewise-linear
    map, a categorical one category by category), then simplex interpolation onto the
    lattice's vertices, whose values are the parameters."""

    network: ClassVar[bool] = False
    reads_tables: ClassVar[bool] = True

    type: Literal["calibrated_lattice"]
    features: Features
    lattice: Lattice = Lattice()

    @property
    def sizes(self) -> list[int]:
        """The lattice size along each feature as far as the spec fixes it: ``sizes`` (one
        number sizes the numeric inputs); a categorical input's is its number of listed
        categories (with ``"auto"``: its entry in a ``sizes`` list, else 2, the least it may
        have, until the table is read)."""
        sizes = self.lattice.sizes
        listed = isinstance(sizes, list)
        sizes = sizes if listed else [sizes] * len(self.features)
        return [size if not feature.categorical else
                len(feature.categories) if isinstance(feature.categories, list) else
                size if listed else 2
                for feature, size in zip(self.features, sizes, strict=True)]

    @model_validator(mode="after")
    def _fits(self) -> CalibratedLattice:
        _no_column_twice(self.features)
        sizes = self.lattice.sizes
        if isinstance(sizes, list) and len(sizes) != len(self.features):
            raise ValueError(f"lattice.sizes has {len(sizes)} entries for "
                             f"{len(self.features)} features; give one per feature")
        for j, feature in enumerate(self.features):
            _check_lattice_input(feature, j, sizes[j] if isinstance(sizes, list) else None)
        vertices = math.prod(self.sizes)
        if vertices > MAX_LATTICE_VERTICES:
            raise ValueError(f"lattice.sizes: the lattice would have {vertices:,} vertices, "
                             f"over {MAX_LATTICE_VERTICES:,} (2^22); use fewer features or "
                             "smaller sizes")
        return self


def _check_lattice_input(feature: TableFeature, j: int, listed: int | None) -> None:
    """A lattice input: numeric without convexity, or categorical whose listed categories
    are 2 or more, all in its order (if any), and as many as its ``sizes`` entry."""
    where = f"features[{j}]: column {feature.column!r}"
    if feature.convexity != "none":
        raise ValueError(f"{where}: a lattice input has no convexity; drop it (or use "
                         "calibrated_linear)")
    if not isinstance(feature.categories, list):
        return
    count = len(feature.categories)
    if count < 2:
        raise ValueError(f"{where}: a lattice input needs 2 or more categories, got {count}")
    if listed is not None and listed != count:
        raise ValueError(f"lattice.sizes[{j}]: column {feature.column!r} has {count} "
                         f"categories, so its lattice size is {count}, not {listed}; "
                         f"give {count}")
    order = feature.monotonic_order
    if order is not None and len(order) != count:
        missing = [c for c in feature.categories if c not in order]
        raise ValueError(f"{where}: monotonic_order leaves out {missing[0]!r}; a lattice "
                         "input's order lists every category")


class LabelColumn(StrictModel):
    """A class label from a text (or number) column: rows whose value is one of
    ``positive`` are positive, every other row negative."""

    column: ColumnName
    positive: list[Category] = Field(min_length=1)


TableLabel = ColumnName | LabelColumn


class ColumnGroup(StrictModel):
    """The rows whose ``column`` equals a value, is ``in`` a list, or lies in a numeric
    range (``gt``, ``gte``, ``lt``, ``lte``; several of them: all hold)."""

    model_config = ConfigDict(populate_by_name=True)

    column: ColumnName
    equals: Category | Number | None = None
    in_: list[Category | Number] | None = Field(None, alias="in", min_length=1)
    gt: Number | None = None
    gte: Number | None = None
    lt: Number | None = None
    lte: Number | None = None

    @property
    def bounds(self) -> dict[str, float]:
        """The range's given bounds by name."""
        return {name: value for name in ("gt", "gte", "lt", "lte")
                if (value := getattr(self, name)) is not None}

    @model_validator(mode="after")
    def _one_test(self) -> ColumnGroup:
        forms = [self.equals is not None, self.in_ is not None, bool(self.bounds)]
        if sum(forms) != 1:
            raise ValueError(f"column {self.column!r}: give exactly one test: \"equals\", "
                             "\"in\", or a range (\"gt\", \"gte\", \"lt\", \"lte\")")
        return self


class AllOfGroup(StrictModel):
    """The rows in every listed group (an intersection)."""

    all_of: list[GroupPredicate] = Field(min_length=1, max_length=64)


GroupPredicate = ColumnGroup | AllOfGroup
AllOfGroup.model_rebuild()


class TableData(StrictModel):
    """A calibrated model's examples: the rows of ``table``, their ``label``, and ``groups``
    by column (or 0/1 vectors) for rate constraints."""

    table: DataRef
    label: TableLabel
    groups: dict[str, GroupPredicate | VectorValue] | None = None


def is_calibrated(model: Any) -> bool:
    """Whether a spec's model reads raw tables (its ``reads_tables``)."""
    return bool(getattr(model, "reads_tables", False))


#: The formats a table may have (read by column name).
TABLE_FORMATS = ("csv", "parquet", "feather")


def check_table_spec(spec: Any) -> None:
    """Refuse a spec whose model and data do not fit (no data read): a table without a
    calibrated model, a calibrated model without tables, a loss it cannot score.

    Raises
    ------
    ValueError
        The message starts with the JSON path.
    """
    if not is_calibrated(spec.model):
        for k, term in enumerate(spec.terms):
            where = "objective.data" if len(spec.terms) == 1 else f"objective.terms[{k}].data"
            if isinstance(term.data, TableData):
                raise ValueError(f"{where}.table: a table is read by a calibrated model; set "
                                 "model.type to calibrated_linear or calibrated_lattice")
        return
    _check_calibrated_objective(spec)
    if spec.dimension is not None:
        raise ValueError("dimension: a calibrated model's parameters follow from its "
                         "features; omit dimension")
    for k, constraint in enumerate(spec.constraints):
        if constraint.type == "group_loss":
            raise ValueError(f"constraints[{k}]: group_loss constraints are not available "
                             f"with {spec.model.type}; use the linear model on a feature "
                             "matrix")
        if constraint.type == "rate" and constraint.data is not None:
            raise ValueError(f"constraints[{k}].data: with a calibrated model, rates are "
                             "counted on the objective's table (groups by column); omit data")


def _check_calibrated_objective(spec: Any) -> None:
    """A calibrated model's objective: one empirical risk of one score over tables."""
    objective = spec.objective
    if getattr(objective, "type", None) != "empirical_risk":
        raise ValueError("objective: a calibrated model scores table rows; the objective "
                         "must be an empirical_risk over data.table")
    data, loss = objective.data, objective.loss
    if loss == "softmax_cross_entropy":
        raise ValueError(f"objective.loss: {spec.model.type} has one output; "
                         "softmax_cross_entropy scores K (use a hinge, logistic, squared or "
                         "pairwise_hinge loss)")
    if loss == "pairwise_hinge":
        tables = {"positive": data.positive, "negative": data.negative}
    else:
        if not isinstance(data, TableData):
            raise ValueError("objective.data.features: a calibrated model reads data.table "
                             "and data.label (columns by name), not a feature matrix")
        tables = {"table": data.table}
    for name, table in tables.items():
        if getattr(table, "format", None) not in TABLE_FORMATS:
            raise ValueError(f"objective.data.{name}: a calibrated model reads a table here: "
                             f"{{\"uri\": ...}} to a {', '.join(TABLE_FORMATS)} file")
