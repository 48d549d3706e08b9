"""Rate constraints (Cotter, Jiang, Sridharan 2019, §1.2) on examples read in partitions.

A rate is a mean over a subset S of the examples (a group, intersected with a label), so
each example's share of a rate constraint g is its weight over the whole of S
(:mod:`worker.problem.rates`): g = c + sum_p g_p, g_p partition p's sum over its own rows. Two
rounds after the census put every partition's share where the partition is held:

1. **totals**: each partition reads its rows of every group's 0/1 column (a 1-D ``npy`` file,
   ranged reads, as a separate labels file), checks them (a value other than 0 or 1 is
   named by global row), and counts every group's size and weight by label
   (:class:`~worker.problem.compile_rates.GroupTotals`); the counts are added by the fixed
   pairwise tree, and the driver checks the constraints against them (an unknown group,
   an empty subset: the messages of the in-memory path) and takes c;
2. **shares**: each partition builds its share of both forms
   (:func:`~worker.problem.compile_rates.shared_rates` with the whole data's totals), whose
   proxy constants are added by the same tree: c plus their sum is the least value of g over
   all predictions, which refuses a constraint that can never hold.

:class:`PartitionedRates` then stands where a :class:`~worker.problem.rates.RateSet` does:
g at a block of points is one map-reduce (each partition scores its rows), and a game's round
(:mod:`worker.algorithms.run.game_rounds`) draws its rows with their shares.

A rate as the objective (:mod:`worker.problem.rate_objective`) is one more row of the same
shares, after the constraints': its subset S's rows, each with c_i / sum_S c over the whole
data (:func:`~worker.problem.compile_rates.objective_rows`, checked on the driver against
the totals as the constraints are). :class:`PartitionedTrueRate`, a view of that row, stands
where a :class:`~worker.problem.rates.TrueRate` does: its true values and its hinge proxy are
the same map-reduce, and a round's rows carry its shares with the constraints'.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from worker.distributed.batch import PartitionedBatch
from worker.distributed.partitions import GROUPS, PartitionPlan
from worker.distributed.ranges import vector_rows
from worker.distributed.tasks import (
    add,
    concatenated,
    picked,
    rows_matrix,
    rows_nbytes,
    tree_reduce,
)
from worker.kernels.partition_losses import selected_rows
from worker.kernels.svrg import Rows
from worker.losses import BY_CODE, TARGETS
from worker.problem.compile_rates import (
    GroupTotals,
    RateExamples,
    check_length,
    check_possible,
    group_members,
    rate_blocks,
    shared_rates,
)
from worker.problem.rates import METRICS, RateForm, RateSet
from worker.settings import DataSettings
from worker.spec.models import RateObjective, Spec

#: The forms a map-reduce evaluates: true indicators, the proxy bound, the relaxed terms.
TRUE, PROXY, RELAXED = "true", "proxy", "relaxed"


@dataclass(frozen=True)
class RateShare:
    """A partition's share of the rate constraints: both forms over its rows, the relaxed
    one without constant, the proxy one with its part of the shift to nonnegative weights
    (m_r constraints, the partition's rows as columns)."""

    proxy: RateForm
    relaxed: RateForm


def has_rates(spec: Spec) -> bool:
    """Whether rates count on the spec's examples: rate constraints or a rate objective."""
    return bool(rate_blocks(spec)) or has_rate_objective(spec)


def rate_terms(spec: Spec) -> int:
    """The rate terms of the spec's constraints and of a rate objective, each an entry of
    an example's share."""
    return sum(len(constraint.linear()[0]) for _, constraint in rate_blocks(spec)) \
        + has_rate_objective(spec)


def partition_groups(plan: PartitionPlan, rows: Rows,
                     settings: DataSettings) -> dict[str, np.ndarray]:
    """Each group's members among the partition's rows (local indices), read from its
    column's rows [first_row, first_row + rows); a value other than 0 or 1 is refused at
    ``objective.data.groups.<name>[global row]``."""
    offset, count = int(rows.first_row), rows.labels.shape[0]
    return {column.name: group_members(
        vector_rows(column.ref, column.npy, f"{GROUPS}.{column.name}", plan.roots, offset,
                    count, settings), f"{GROUPS}.{column.name}", offset)
        for column in plan.groups}


def _labels(rows: Rows, labelled: bool) -> np.ndarray | None:
    return rows.labels if labelled else None


def partition_totals(rows: Rows, members: dict[str, np.ndarray], names: tuple[str, ...],
                     labelled: bool) -> GroupTotals:
    """The partition's :class:`~worker.problem.compile_rates.GroupTotals`."""
    return GroupTotals.of(names, members, rows.labels.shape[0], _labels(rows, labelled),
                          rows.weights)


def add_totals(left: GroupTotals, right: GroupTotals) -> GroupTotals:
    """One node of the reduction tree."""
    return left + right


def partition_share(spec: Spec, rows: Rows, members: dict[str, np.ndarray],
                    totals: GroupTotals, d: int, labelled: bool) -> RateShare:
    """The partition's :class:`RateShare` (module docstring, round 2)."""
    rates = shared_rates(spec, RateExamples(rows_matrix(rows, d), _labels(rows, labelled),
                                            members, 0, GROUPS, rows.weights, totals))
    own = rates.relaxed.constant
    return RateShare(RateForm(rates.proxy.constant - own, rates.proxy.plus, rates.proxy.minus),
                     RateForm(np.zeros_like(own), rates.relaxed.plus, rates.relaxed.minus))


def proxy_constant(share: RateShare) -> np.ndarray:
    """The share's part of the proxy form's constant, shape (m_r,)."""
    return share.proxy.constant


def partial_values(rows: Rows, share: RateShare, points: np.ndarray, form: str,
                   proxy: str) -> np.ndarray:
    """The partition's part of g at ``points`` (K, d), shape (K, m_r): the ``form``'s true
    indicators (:data:`TRUE`) or its ``proxy`` bound."""
    rates = RateSet(rows_matrix(rows, points.shape[1]), share.proxy, share.relaxed)
    if form == TRUE:
        return rates.values(points)
    return (rates.proxy_values if form == PROXY else rates.relaxed_values)(points, proxy)


def sampled_share(rows: Rows, share: RateShare, key: np.uint64, fraction: float,
                  forced: int) -> tuple[Rows, RateShare]:
    """The rows a round selects (as :func:`~worker.distributed.tasks.sample_of` does) with
    their columns of both forms."""
    chosen = selected_rows(rows, key, fraction, forced)
    return picked(rows, chosen), RateShare(
        *(RateForm(form.constant, form.plus[:, chosen], form.minus[:, chosen])
          for form in (share.proxy, share.relaxed)))


class PartitionedRates:
    """Rates of examples left in ``batch``'s partitions, where a
    :class:`~worker.problem.rates.RateSet` stands (module docstring): g at points is a
    map-reduce, counted with the batch's objective values. The shares hold the rate
    constraints' rows, then a rate objective's; a view reads the ``rows`` of them it
    stands for.

    Parameters
    ----------
    batch : PartitionedBatch
        The examples' partitions.
    shares : list
        Handles of each partition's :class:`RateShare`, in row order.
    constant : ndarray, shape (m_s,)
        c, every row's own constant (0 for a rate objective's).
    least : ndarray, shape (m_s,)
        The proxy form's constant over every partition (g's least value).
    rows : slice, optional
        The rows this view stands for (default: all m_s).
    """

    def __init__(self, batch: PartitionedBatch, shares: list[Any], constant: np.ndarray,
                 least: np.ndarray, rows: slice = slice(None)):
        self.batch, self.shares, self.rows = batch, shares, rows
        self.every_constant, self.every_least = constant, least

    def view(self, rows: slice) -> PartitionedRates:
        """The view of the shares' ``rows``."""
        return PartitionedRates(self.batch, self.shares, self.every_constant,
                                self.every_least, rows)

    @property
    def constant(self) -> np.ndarray:
        """The view's rows' own constants, shape (m_r,)."""
        return self.every_constant[self.rows]

    @property
    def least(self) -> np.ndarray:
        """The view's rows' least values over all predictions, shape (m_r,)."""
        return self.every_least[self.rows]

    @property
    def m(self) -> int:
        """Number of rows in the view (of rate constraints, or 1 for a rate objective)."""
        return int(self.constant.shape[0])

    def of(self, rates: RateSet) -> RateSet:
        """The view's rows of ``rates``, a RateSet over every row of the shares (a round's,
        :meth:`round_sample`)."""
        return RateSet(rates.features, *(RateForm(form.constant[self.rows],
                                                   form.plus[self.rows], form.minus[self.rows])
                                          for form in (rates.proxy, rates.relaxed)))

    def values(self, w: np.ndarray) -> np.ndarray:
        """True (indicator) g(w): shape (m_r,) for w (d,), (T, m_r) for w (T, d)."""
        return self._reduced(w, TRUE, "hinge")

    def proxy_values(self, w: np.ndarray, proxy: str = "hinge") -> np.ndarray:
        """Proxy constraints g~(w) >= g(w), shapes as :meth:`values`."""
        return self._reduced(w, PROXY, proxy)

    def relaxed_values(self, w: np.ndarray, proxy: str = "hinge") -> np.ndarray:
        """The Lagrangian's relaxed constraints, shapes as :meth:`values`."""
        return self._reduced(w, RELAXED, proxy)

    def _reduced(self, w: np.ndarray, form: str, proxy: str) -> np.ndarray:
        points = np.ascontiguousarray(np.atleast_2d(w), dtype=np.float64)
        batch, what = self.batch, f"rate constraints' {form} values"
        run = batch.executor
        shared = run.share(points, what)
        root = tree_reduce([run.submit(partial_values, part, share, shared, form, proxy)
                            for part, share in zip(batch.parts, self.shares, strict=True)],
                           lambda a, b: run.submit(add, a, b))
        (total,) = run.gather([root], what)
        batch.count_values(points.nbytes * batch.workers + 8 * points.shape[0]
                           * self.every_constant.shape[0] * (2 * len(batch.parts) - 1))
        total = total[:, self.rows] + self.constant
        return total[0] if np.ndim(w) == 1 else total

    def round_sample(self, key: np.uint64, rows: int, what: str) -> tuple[Rows, RateSet]:
        """About ``rows`` examples selected by ``key`` from every partition, and every row
        of the shares over them (the view's: :meth:`of`) as an unbiased estimate of the
        whole data's: each share scaled by n / (rows drawn), the constants the whole
        data's. One communication round, counted with the batch's."""
        batch = self.batch
        began, run = time.perf_counter(), batch.executor
        forced = int(key % np.uint64(batch.n))
        parts = run.gather([run.submit(sampled_share, part, share, key,
                                       min(1.0, rows / batch.n), forced)
                            for part, share in zip(batch.parts, self.shares, strict=True)], what)
        sample = concatenated([part for part, _ in parts])
        drawn = sample.labels.shape[0]
        scale = batch.n / drawn

        def form(which: str, constant: np.ndarray) -> RateForm:
            forms = [getattr(share, which) for _, share in parts]
            return RateForm(constant, sp.hstack([f.plus for f in forms], format="csr") * scale,
                            sp.hstack([f.minus for f in forms], format="csr") * scale)

        rates = RateSet(rows_matrix(sample, batch.d), form(PROXY, self.every_least),
                        form(RELAXED, self.every_constant))
        batch.count_round(sum(_share_bytes(p) for p in parts), drawn,
                          time.perf_counter() - began)
        return sample, rates


def _share_bytes(part: tuple[Rows, RateShare]) -> int:
    rows, share = part
    forms = (share.proxy.plus, share.proxy.minus, share.relaxed.plus, share.relaxed.minus)
    return rows_nbytes(rows) + sum(f.data.nbytes + f.indices.nbytes + f.indptr.nbytes
                                   for f in forms)


@dataclass(frozen=True)
class PartitionedTrueRate:
    """A rate as the objective (:mod:`worker.problem.rate_objective`) on examples left in
    partitions, where a :class:`~worker.problem.rates.TrueRate` stands: its row of the
    shares (``rate``, a one-row view), whose true values score the candidates and whose
    hinge proxy values are the one the game plays; ``counted`` is |S|, the examples it
    counts over the whole data (the in-memory proxy's rows)."""

    rate: PartitionedRates
    counted: int

    def values(self, points: np.ndarray) -> np.ndarray:
        """The true rate at each point: (K, d) -> (K,), one map-reduce."""
        return self.rate.values(np.atleast_2d(points))[:, 0]

    def proxy_values(self, points: np.ndarray) -> np.ndarray:
        """Its hinge proxy at each point: (K, d) -> (K,), one map-reduce."""
        return self.rate.proxy_values(np.atleast_2d(points))[:, 0]


@dataclass(frozen=True)
class OpenedRates:
    """What :func:`open_rates` opens: the rate constraints and a rate objective (each None
    when the spec has none), views of the same shares."""

    constraints: PartitionedRates | None
    objective: PartitionedTrueRate | None


def has_rate_objective(spec: Spec) -> bool:
    """Whether the spec minimizes a rate."""
    return isinstance(spec.objective, RateObjective)


def open_rates(batch: PartitionedBatch, plan: PartitionPlan, spec: Spec,
               settings: DataSettings) -> OpenedRates:
    """The two rounds of the module docstring over ``batch``'s partitions, for the rate
    constraints and a rate objective.

    Raises
    ------
    SpecError
        A group column of another length than the examples, an unknown group, an empty
        subset, a constraint that can never hold (the in-memory path's messages).
    DataError
        A group value other than 0 or 1, named by global row.
    """
    run, what = batch.executor, "rate constraints reading the groups"
    for column in plan.groups:
        check_length(f"{GROUPS}.{column.name}", column.npy.shape[0], batch.n)
    names = tuple(column.name for column in plan.groups)
    labelled = BY_CODE[plan.kind].labels is not TARGETS
    members = [run.submit(partition_groups, plan, part, settings) for part in batch.parts]
    root = tree_reduce([run.submit(partition_totals, part, held, names, labelled)
                        for part, held in zip(batch.parts, members, strict=True)],
                       lambda a, b: run.submit(add_totals, a, b))
    (totals,) = run.gather([root], what)
    empty = np.zeros(0, dtype=np.int64)
    checked = shared_rates(spec, RateExamples(
        sp.csr_matrix((0, batch.d)), np.zeros(0) if labelled else None,
        dict.fromkeys(names, empty), 0, GROUPS, np.zeros(0), totals))
    constant = checked.relaxed.constant
    shares = [run.submit(partition_share, spec, part, held, totals, batch.d, labelled)
              for part, held in zip(batch.parts, members, strict=True)]
    root = tree_reduce([run.submit(proxy_constant, share) for share in shares],
                       lambda a, b: run.submit(add, a, b))
    (shifts,) = run.gather([root], "rate constraints' shares")
    least = constant + shifts
    blocks = [k for k, _ in rate_blocks(spec)]
    check_possible(least[:len(blocks)], blocks)
    batch.setup_rounds += 2
    batch.setup_bytes += run.moved(totals.table.nbytes * 2 * len(batch.parts)
                                   + least.nbytes * 2 * len(batch.parts))
    every, objective = PartitionedRates(batch, shares, constant, least), None
    if has_rate_objective(spec):
        rate = spec.objective
        objective = PartitionedTrueRate(every.view(slice(len(blocks), len(blocks) + 1)),
                                        totals.subset(rate.group, METRICS[rate.metric][0])[0])
    return OpenedRates(every.view(slice(0, len(blocks))) if blocks else None, objective)
