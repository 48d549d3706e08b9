"""A calibrated model's raw pair tables read in partitions (docs/scale.md): the driver fits
the model's fixed calibration from a sample round, and every worker then turns its own rows
into feature rows (:class:`~worker.distributed.pairs.PairPlan`'s ``transform``).

The sample round reads each row-aligned partition of both parquet tables once, only the
columns the calibration is fitted on (numeric inputs whose keypoints are quantiles, and
categorical inputs with ``"auto"`` categories; a model whose keypoints and categories are all
listed has no sample round), where the partition is held, and returns to the driver:

* the rows a draw of the partition's own generator keeps (seeded by the job's seed and the
  partition's index, each row kept with probability ``sample_rows / n``), so the sample is
  the same in this process, on one worker and on N;
* every value of each categorical column whose categories are ``"auto"`` (a sample could
  miss a rare one, which a worker would then refuse).

Numeric keypoints are then the quantiles of the sampled rows of both tables pooled, as the
in-memory lowering takes them of every row (:func:`worker.tables.calibrators.fit_calibrator`);
with at most ``sample_rows`` pairs every row is kept and the calibration is the in-memory
one. The driver holds the sample and the fitted model, never a row per pair beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from worker.distributed.executors import Executor
from worker.distributed.pairs import NEGATIVE, POSITIVE, PairPlan, table_rows
from worker.distributed.partitions import readable
from worker.losses import PAIRWISE_HINGE
from worker.settings import DataSettings
from worker.spec.models import EmpiricalRisk, RateConstraint, Spec
from worker.spec.tables import is_calibrated
from worker.tables.columns import Table
from worker.tables.lower import fit_model
from worker.tables.model import TableModel

#: Pairs the calibration's sample keeps at most (about; each row is drawn on its own).
SAMPLE_ROWS = 2**20

#: The one format whose raw tables are read in partitions: row groups of named columns.
PARQUET = "parquet"


def raw_pair_tables(spec: Spec) -> bool:
    """Whether the spec is a calibrated model's ``pairwise_hinge`` on two parquet tables a
    plan can cut (references outside the spec, no ``sha256``), with no rate constraints and
    no weights."""
    objective = spec.objective
    if not is_calibrated(spec.model) or not isinstance(objective, EmpiricalRisk) \
            or objective.loss != PAIRWISE_HINGE or objective.data.weights is not None \
            or any(isinstance(c, RateConstraint) for c in spec.constraints):
        return False
    tables = (objective.data.positive, objective.data.negative)
    return all(readable(t) and t.format == PARQUET for t in tables)


@dataclass(frozen=True)
class Sample:
    """What one partition returns to the sample round: its kept rows of each table (the
    model's columns) and every value of the ``"auto"`` categorical columns."""

    positive: pa.Table
    negative: pa.Table
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


def sample_part(plan: PairPlan, k: int, request: SampleRound,
                settings: DataSettings) -> Sample:
    """Partition ``k``'s sample (module docstring). Every numeric column is checked here,
    where the rows have their global numbers, so a bad value is named by table, column and
    row of the whole table."""
    start, stop = plan.ranges[k]
    roots = [Path(root) for root in plan.roots]
    sides = [table_rows(table, start, stop, request.columns, roots, settings)
             for table in (plan.positive, plan.negative)]
    read = [Table.of(side, path, start) for side, path in zip(sides, (POSITIVE, NEGATIVE),
                                                              strict=True)]
    for table in read:
        for name in request.numeric:
            table.numbers(name)
    seen = {name: frozenset().union(*(table.text(name).to_pylist() for table in read))
            for name in request.auto}
    keep = pa.array(np.random.default_rng([request.seed, k]).random(stop - start)
                    < request.fraction)
    return Sample(sides[0].filter(keep), sides[1].filter(keep), seen)


def fitted_transform(spec: Spec, plan: PairPlan, executor: Executor, seed: int,
                     settings: DataSettings, sample_rows: int = SAMPLE_ROWS) -> TableModel:
    """The calibrated model's transform fitted on a sample round of at most about
    ``sample_rows`` pairs over the plan's partitions (module docstring), read where
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
                          tuple(auto), sample_rows / plan.n, seed)
    samples = [] if not request.columns else executor.gather(
        [executor.submit(sample_part, plan, k, request, settings)
         for k in range(len(plan.ranges))], "sampling the tables for the calibration")
    categories = {name: sorted(frozenset().union(*(s.categories[name] for s in samples)))
                  for name in request.auto}
    features = [f.model_copy(update={"categories": categories[f.column]})
                if f.column in categories else f for f in model.features]
    declared = spec.model_copy(update={"model": model.model_copy(update={"features": features})})
    tables = [Table.of(pa.concat_tables([getattr(s, side) for s in samples])
                       if samples else pa.table({}), path)
              for side, path in (("positive", POSITIVE), ("negative", NEGATIVE))]
    return fit_model(declared, tables)
