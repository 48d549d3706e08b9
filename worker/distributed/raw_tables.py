"""A calibrated model's raw parquet tables read in partitions (docs/scale.md): the driver
fits the model's fixed calibration from a sample round, and every worker then turns its own
rows into feature rows (a :class:`~worker.distributed.pairs.PairPlan`'s or a
:class:`~worker.distributed.partitions.PartitionPlan`'s ``transform``).

The tables are ``pairwise_hinge``'s two (row-aligned) or a pointwise objective's one
``data.table`` (:class:`RawTables`). The sample round reads each row-aligned partition of
every table once, only the columns the calibration is fitted on (numeric inputs whose
keypoints are quantiles, and categorical inputs with ``"auto"`` categories; a model whose
keypoints and categories are all listed has no sample round), where the partition is held,
and returns to the driver:

* the rows a draw of the partition's own generator keeps (seeded by the job's seed and the
  partition's index, each row kept with probability ``sample_rows / n``), so the sample is
  the same in this process, on one worker and on N;
* every value of each categorical column whose categories are ``"auto"`` (a sample could
  miss a rare one, which a worker would then refuse).

Numeric keypoints are then the quantiles of the sampled rows of every table pooled, as the
in-memory lowering takes them of every row (:func:`worker.tables.calibrators.fit_calibrator`;
unweighted there and here: a pair's weight counts in the loss, not in the calibration);
with at most ``sample_rows`` rows every row is kept and the calibration is the in-memory
one. The driver holds the sample and the fitted model, never a row beyond it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from worker.distributed.executors import Executor
from worker.distributed.pairs import (
    PairPlan,
    Table,
    covering_groups,
    file_bytes,
    row_ranges,
    table_layout,
    table_rows,
)
from worker.distributed.partitions import ROW_GROUPS, TABLE, PartitionPlan, Piece, readable
from worker.errors import SpecError
from worker.losses import PAIRWISE_HINGE
from worker.settings import DataSettings
from worker.spec.models import EmpiricalRisk, RateConstraint, Spec
from worker.spec.tables import TableData, is_calibrated
from worker.tables.columns import Table as Columns
from worker.tables.lower import fit_model
from worker.tables.model import TableModel

#: Rows of each table the calibration's sample keeps at most (about; each row is drawn on
#: its own).
SAMPLE_ROWS = 2**20

#: The one format whose raw tables are read in partitions: row groups of named columns.
PARQUET = "parquet"

def raw_pair_tables(spec: Spec) -> bool:
    """Whether the spec is a calibrated model's ``pairwise_hinge`` on two parquet tables a
    plan can cut (references outside the spec, no ``sha256``), with no rate constraints;
    the pairs' weights, if any, are read as on compiled pair tables
    (:mod:`worker.distributed.weights`)."""
    objective = spec.objective
    if not _calibrated_risk(spec) or objective.loss != PAIRWISE_HINGE:
        return False
    tables = (objective.data.positive, objective.data.negative)
    return all(readable(t) and t.format == PARQUET for t in tables)


def raw_example_table(spec: Spec) -> bool:
    """Whether the spec is a calibrated model's pointwise loss on one parquet
    ``data.table`` a plan can cut (a reference outside the spec, no ``sha256``), with no
    groups and no rate constraints."""
    data = getattr(spec.objective, "data", None)
    return _calibrated_risk(spec) and isinstance(data, TableData) and data.groups is None \
        and readable(data.table) and data.table.format == PARQUET


def _calibrated_risk(spec: Spec) -> bool:
    """A calibrated model's empirical risk without rate constraints."""
    return is_calibrated(spec.model) and isinstance(spec.objective, EmpiricalRisk) \
        and not any(isinstance(c, RateConstraint) for c in spec.constraints)


@dataclass(frozen=True)
class RawTables:
    """Raw parquet tables cut into the same row ranges [start, stop): ``sides`` are the
    pairs' positive and negative tables or a pointwise objective's one table (their
    footers' layouts), ``roots`` the data roots."""

    sides: tuple[Table, ...]
    ranges: tuple[tuple[int, int], ...]
    roots: tuple[str, ...]

    @property
    def n(self) -> int:
        """Rows of each table."""
        return self.sides[0].rows

    @classmethod
    def of_pairs(cls, plan: PairPlan) -> RawTables:
        """The raw tables of a pair plan."""
        return cls((plan.positive, plan.negative), plan.ranges, plan.roots)


def plan_table(spec: Spec, roots: Sequence[Path], partition_rows: int,
               settings: DataSettings) -> tuple[PartitionPlan, RawTables]:
    """The plan of a spec :func:`raw_example_table` accepts, from the table's footer alone:
    its consecutive row groups up to ``partition_rows`` rows a partition (one group at
    least), read as :func:`worker.distributed.chunks.read_chunk` reads a raw table (the
    plan has no transform yet), and the same rows as the sample round's tables.

    Raises
    ------
    SpecError
        A table of no rows.
    DataError
        A footer that cannot be read.
    """
    objective = spec.objective
    side = table_layout(objective.data.table, TABLE, roots, settings)
    if side.rows == 0:
        raise SpecError.at(TABLE, "no rows; give at least one row")
    ranges = row_ranges(side, partition_rows)
    pieces = []
    for start, stop in ranges:
        first, last, _ = covering_groups(side, start, stop)
        pieces.append(Piece(start, stop, tuple(range(first, last + 1))))
    kept = tuple(str(root) for root in roots)
    plan = PartitionPlan(features=side.ref, labels=None, loss=objective.loss,
                         layout=ROW_GROUPS, pieces=tuple(pieces), roots=kept,
                         size=file_bytes(side.ref, TABLE, roots, settings),
                         label=objective.data.label)
    return plan, RawTables((side,), ranges, kept)


@dataclass(frozen=True)
class Sample:
    """What one partition returns to the sample round: its kept rows of each table (the
    model's columns, in the order of :attr:`RawTables.sides`) and every value of the
    ``"auto"`` categorical columns."""

    sides: tuple[pa.Table, ...]
    categories: dict[str, frozenset[str]]


@dataclass(frozen=True)
class SampleRound:
    """What the sample round reads: the ``columns`` the calibration is fitted on, of which
    ``numeric`` are numeric inputs whose keypoints are quantiles (read as numbers) and
    ``auto`` categorical inputs with ``"auto"`` categories; each row is kept
    with probability ``fraction`` (every row for 1 or more), drawn from the job's ``seed``
    and the partition's index."""

    columns: tuple[str, ...]
    numeric: tuple[str, ...]
    auto: tuple[str, ...]
    fraction: float
    seed: int


def sample_part(tables: RawTables, k: int, request: SampleRound,
                settings: DataSettings) -> Sample:
    """Partition ``k``'s sample (module docstring). Every numeric column is checked here,
    where the rows have their global numbers, so a bad value is named by table, column and
    row of the whole table."""
    start, stop = tables.ranges[k]
    roots = [Path(root) for root in tables.roots]
    sides = [table_rows(side, start, stop, request.columns, roots, settings)
             for side in tables.sides]
    read = [Columns.of(rows, side.path, start)
            for rows, side in zip(sides, tables.sides, strict=True)]
    for table in read:
        for name in request.numeric:
            table.numbers(name)
    seen = {name: frozenset().union(*(table.text(name).to_pylist() for table in read))
            for name in request.auto}
    keep = pa.array(np.random.default_rng([request.seed, k]).random(stop - start)
                    < request.fraction)
    return Sample(tuple(rows.filter(keep) for rows in sides), seen)


def fitted_transform(spec: Spec, tables: RawTables, executor: Executor, seed: int,
                     settings: DataSettings, sample_rows: int = SAMPLE_ROWS) -> TableModel:
    """The calibrated model's transform fitted on a sample round of at most about
    ``sample_rows`` rows of each table over their partitions (module docstring), read where
    ``executor`` runs them.

    Raises
    ------
    DataError
        A partition's column cannot be read or does not hold what the model needs (named by
        table, column and global row), or the sample cannot fit a calibrator.
    """
    model = spec.model
    quantiles = [f.column for f in model.features
                 if not f.categorical and not isinstance(f.keypoints, list)]
    auto = [f.column for f in model.features if f.categorical and f.categories == "auto"]
    request = SampleRound(tuple(dict.fromkeys(quantiles + auto)), tuple(quantiles),
                          tuple(auto), sample_rows / tables.n, seed)
    samples = [] if not request.columns else executor.gather(
        [executor.submit(sample_part, tables, k, request, settings)
         for k in range(len(tables.ranges))], "sampling the tables for the calibration")
    categories = {name: sorted(frozenset().union(*(s.categories[name] for s in samples)))
                  for name in request.auto}
    features = [f.model_copy(update={"categories": categories[f.column]})
                if f.column in categories else f for f in model.features]
    declared = spec.model_copy(update={"model": model.model_copy(update={"features": features})})
    sampled = [Columns.of(pa.concat_tables([s.sides[i] for s in samples])
                          if samples else pa.table({}), side.path)
               for i, side in enumerate(tables.sides)]
    return fit_model(declared, sampled)
