"""The report's training section on examples left in partitions (docs/scale.md "The report
on partitions"): one map-reduce over the partitions, never the rows on the driver.

Each partition counts every deployed point on its rows
(:func:`~worker.report.counts.counts_of`: the weighted loss and error sums per member, the
rows' weight, and each rate term's numerator, denominator and subset and group sizes, its
groups read from their 1-D ``npy`` columns in the partition's rows); the fixed pairwise tree
of the batch's rounds adds them, and the driver makes the report from the totals as it does
from rows it holds (:func:`~worker.report.build.counted_report`), so the numbers do not
depend on the partitions or the workers. The validation section's rows are read on the
driver, as in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.distributed.batch import PartitionedBatch
from worker.distributed.partitions import PartitionPlan
from worker.distributed.rate_parts import partition_groups
from worker.distributed.tasks import Rows, rows_matrix, tree_reduce
from worker.problem.compile import DataSource
from worker.report.build import counted_report
from worker.report.counts import Counts, Term, counts_of
from worker.report.metrics import Deployed, Examples, group_masks
from worker.report.schema import Report
from worker.settings import DataSettings
from worker.spec.models import Spec

#: Each deployed point's counts, by its name in the report.
PointCounts = dict[str, Counts]


def partition_counts(rows: Rows, plan: PartitionPlan, settings: DataSettings, d: int,
                     loss: str | None, terms: list[Term], classes: bool,
                     deployed: dict[str, Deployed]) -> PointCounts:
    """Every deployed point's counts on a partition's rows (width ``d``; labels +-1 classes
    with ``classes``), of ``loss`` and the rate ``terms`` (their groups read here, only when
    there are terms)."""
    n = rows.labels.shape[0]
    groups = group_masks(partition_groups(plan, rows, settings), n) if terms else {}
    examples = Examples(rows_matrix(rows, d), rows.labels, classes, groups,
                        weights=rows.weights if plan.weighted else None)
    return {name: counts_of(loss, terms, examples, point) for name, point in deployed.items()}


def added(left: PointCounts, right: PointCounts) -> PointCounts:
    """One node of the reduction tree."""
    return {name: left[name] + right[name] for name in left}


@dataclass(frozen=True)
class PartitionedTraining:
    """Training examples in ``batch``'s partitions, read by ``plan`` under the job's data
    ``settings``."""

    batch: PartitionedBatch
    plan: PartitionPlan
    settings: DataSettings

    def report(self, spec: Spec, source: DataSource, deployed: dict[str, Deployed],
               tolerance: float) -> Report:
        """The report of ``deployed`` (module docstring); the validation data and the
        linear rows read through ``source``."""
        return counted_report(spec, source, deployed, tolerance, self.batch.d,
                              self.plan.weighted,
                              lambda loss, terms, classes: self.counts(loss, terms, classes,
                                                                       deployed))

    def counts(self, loss: str | None, terms: list[Term], classes: bool,
               deployed: dict[str, Deployed]) -> PointCounts:
        """Every deployed point's counts over every partition, in one map-reduce counted
        with the batch's objective values (the points to each worker, each point's counts
        up the tree)."""
        batch, what = self.batch, "the report's counts on the training examples"
        run = batch.executor
        shared = run.share(deployed, what)
        root = tree_reduce([run.submit(partition_counts, part, self.plan, self.settings,
                                       batch.d, loss, terms, classes, shared)
                            for part in batch.parts],
                           lambda a, b: run.submit(added, a, b))
        (total,) = run.gather([root], what)
        points = sum(p.solutions.nbytes + p.weights.nbytes for p in deployed.values())
        sums = sum(8 * (2 + c.terms.size + sum(s.size for s in (c.losses, c.wrong)
                                               if s is not None))
                   for c in total.values())
        batch.count_values(points * batch.workers + sums * (2 * len(batch.parts) - 1))
        return total
