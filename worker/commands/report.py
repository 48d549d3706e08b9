"""``lighttouch report``: a Result's report recomputed on other data, for every model a
report covers (linear, network, calibrated on a raw table).

A calibrated model reads the table's rows as the solve did (its columns by name), labels
from a column (``label_column``; text labels through ``positive``) and groups from column
predicates as a spec names them (docs/tables.md "Groups by column"); a linear model or a
network reads a feature matrix, labels from the file, a labels file or a column of it.
Groups may also be files of one 0/1 per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from pydantic import TypeAdapter, ValidationError

from worker.commands.files import file_ref, read_result
from worker.errors import DataError, SpecError
from worker.report.schema import Report
from worker.result import CalibratedModel, NetworkModel, Result
from worker.spec.issues import readable_issues
from worker.spec.tables import ColumnGroup, GroupPredicate, LabelColumn


@dataclass(frozen=True)
class ReportData:
    """Where ``lighttouch report`` finds its examples.

    ``path`` is the data file (``data_format``: its format when its name does not tell);
    labels come from ``labels`` (a file, one per row), ``label_column`` (a column of it;
    with ``positive``, the values of a positive row) or the file itself; ``group_files``
    are ``NAME=FILE`` (one 0/1 per row), ``group_columns`` ``NAME=COLUMN=VALUE`` or
    ``NAME={predicate JSON}`` (tables only).
    """

    path: str
    data_format: str | None = None
    labels: str | None = None
    label_column: str | None = None
    positive: tuple[str, ...] = ()
    group_files: tuple[str, ...] = ()
    group_columns: tuple[str, ...] = ()


def report_file(result_path: str, data: ReportData, tolerance: float | None) -> Report:
    """The Result's report recomputed on ``data`` (its ``validation``); ``tolerance``
    (default the report's) decides what is violated."""
    from worker.losses import CLASSES, LOSSES, SOFTMAX_CROSS_ENTROPY
    from worker.pipeline.reporting import deployed_points
    from worker.report.build import report_labels, report_on
    from worker.report.metrics import Examples

    result = read_result(result_path)
    if result.report is None:
        raise SpecError.at("", f"{result_path} carries no report; solve one empirical risk "
                           "(not max_of, quadratic or pairwise) or a rate to get one")
    if data.labels is not None and data.label_column is not None:
        raise SpecError.at("--labels", "give labels by --labels or --label-column, not both")
    if data.positive and data.label_column is None:
        raise SpecError.at("--positive-label", "names values of a label column; give "
                           "--label-column too")
    if isinstance(result.model, CalibratedModel):
        features, labels, masks = _table_examples(result.model, data)
    else:
        features, labels, masks = _matrix_examples(result, data)
    n = features.shape[0]
    for given in data.group_files:
        name, path = _named(given, "--groups", "NAME=FILE")
        vector = _read_vector(path)
        if vector.shape[0] != n or not np.isin(vector, (0.0, 1.0)).all():
            raise SpecError.at(f"--groups {name}", f"{path}: give one 0/1 entry per row ({n})")
        masks[name] = vector != 0
    if data.labels is not None:
        labels = _read_vector(data.labels)
    loss = result.report.objective.loss
    if labels is not None:
        if labels.shape[0] != n:
            raise SpecError.at(data.labels or data.path, f"{labels.shape[0]} labels for {n} "
                               "rows; give one label per row")
        source = data.labels or data.path
        labels = report_labels(loss, labels, source, f"{source}: label")
    multiclass = loss == SOFTMAX_CROSS_ENTROPY
    classes = not multiclass and (loss is None or LOSSES[loss].labels is CLASSES)
    examples = Examples(sp.csr_matrix(features, dtype=np.float64), labels,
                        labels is not None and classes, masks,
                        labels is not None and multiclass)
    return report_on(result.report, examples, deployed_points(result),
                     result.report.tolerance if tolerance is None else tolerance)


def _matrix_examples(result: Result, data: ReportData):
    """Features (n, d) of a matrix file, its labels (None without), no groups yet."""
    from worker.data.read import read_examples, read_matrix

    if data.group_columns:
        raise SpecError.at("--group", "groups by column need a table: a calibrated model's "
                           "result; give --groups NAME=FILE")
    ref, where = file_ref(data.path, data.data_format, label_column=data.label_column)
    if data.label_column is not None:
        features, labels = read_examples(ref, None, data.path, **where)
    else:
        try:
            features, labels = read_examples(ref, None, data.path, **where)
        except DataError:
            features, labels = read_matrix(ref, data.path, **where), None
    inputs = result.model.sizes[0] if isinstance(result.model, NetworkModel) else \
        len(result.mean.solution)
    if features.shape[1] != inputs:
        hint = "; name the label column with --label-column" \
            if features.shape[1] == inputs + 1 else ""
        raise SpecError.at(data.path, f"{features.shape[1]} columns; the result's model "
                           f"takes {inputs}{hint}")
    return features, labels, {}


def _table_examples(model: CalibratedModel, data: ReportData):
    """Feature rows of a table's raw rows under the calibrated model, labels from its label
    column, groups from its columns."""
    from worker.model_types import MODEL_TYPES
    from worker.tables.groups import group_mask
    from worker.tables.lower import table_labels
    from worker.tables.read import TABLE_READERS, read_table

    if data.data_format is not None and data.data_format not in TABLE_READERS:
        raise SpecError.at("--format", f"a calibrated model reads a table; give one of "
                           f"{', '.join(TABLE_READERS)}")
    table_model = MODEL_TYPES[model.type].deploy(model).rows
    assert table_model is not None
    groups = dict(_group(given) for given in data.group_columns)
    columns = [*table_model.columns, *([data.label_column] if data.label_column else []),
               *(column for predicate in groups.values() for column in _columns(predicate))]
    ref, where = file_ref(data.path, data.data_format)
    if ref.format not in TABLE_READERS:
        raise SpecError.at(data.path, f"a calibrated model reads a table's rows; give a "
                           f"{', '.join(TABLE_READERS)} file (this one reads as {ref.format})")
    table = read_table(ref, list(dict.fromkeys(columns)), data.path, **where)
    labels = None
    if data.label_column is not None:
        label = LabelColumn(column=data.label_column, positive=list(data.positive)) \
            if data.positive else data.label_column
        labels = table_labels(label, table, "--label-column")
    masks = {name: group_mask(predicate, table) for name, predicate in groups.items()}
    return table_model.features(table), labels, masks


_PREDICATE: TypeAdapter[GroupPredicate] = TypeAdapter(GroupPredicate)


def _group(given: str) -> tuple[str, GroupPredicate]:
    """``NAME=COLUMN=VALUE`` (rows whose column equals the value) or ``NAME={predicate}``."""
    name, rest = _named(given, "--group", "NAME=COLUMN=VALUE")
    try:
        if rest.lstrip().startswith("{"):
            return name, _PREDICATE.validate_json(rest)
        column, equals, value = rest.partition("=")
        if not equals:
            raise SpecError.at(f"--group {name}", f"{given!r}: give NAME=COLUMN=VALUE")
        return name, ColumnGroup(column=column, equals=value)
    except ValidationError as error:
        issues = readable_issues(error.errors(include_url=False))
        raise SpecError([(f"--group {name}" + (f" {where}" if where else ""), message)
                         for where, message in issues]) from None


def _columns(predicate: GroupPredicate) -> list[str]:
    if isinstance(predicate, ColumnGroup):
        return [predicate.column]
    return [column for part in predicate.all_of for column in _columns(part)]


def _named(given: str, flag: str, form: str) -> tuple[str, str]:
    name, _, rest = given.partition("=")
    if not name or not rest:
        raise SpecError.at(flag, f"{given!r}: give {form}")
    return name, rest


def _read_vector(path: str) -> np.ndarray:
    from worker.data.read import read_vector

    ref, where = file_ref(path)
    return read_vector(ref, path, **where)
