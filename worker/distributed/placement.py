"""Where a job's examples are held: in this process, or in partitions on a Dask cluster;
decided once per job in the prologue (:mod:`worker.pipeline.prologue`), for solve and
validate alike (docs/scale.md).

=================  ==========================================================================
placement          when
=================  ==========================================================================
``in_process``     the in-process estimate fits ``LIGHTTOUCH_MAX_JOB_BYTES`` (or no budget
                   is checked): today's path, its numbers unchanged; also ``svrg_ol`` with
                   ``solver.svrg.workers`` 0
``cluster``        over the budget, a scheduler address in ``LIGHTTOUCH_DASK_SCHEDULER`` and
                   a family of :data:`PARTITIONED_FAMILIES` (pointwise losses in files,
                   ``pairwise_hinge`` tables): ``auto`` runs its method on partitions
                   (L-BFGS-B on a smooth objective whose only constraint is the box, the
                   proxy-Lagrangian with a rate objective or rate constraints, else the
                   family's algorithm, SVRG OL); also ``svrg_ol`` on pointwise files asking
                   for workers with an address set, and pairs or examples with rates with
                   ``solver.workers: n`` (:func:`workers_placement`)
``local_cluster``  ``svrg_ol`` with an explicit ``solver.svrg.workers: n``, or
                   ``pairwise_hinge`` tables or examples with rate constraints with
                   ``solver.workers: n`` (or pairs past
                   :data:`~worker.distributed.batch.SMALL_DATA_BYTES` within the budget) and
                   no address: a ``LocalCluster`` on this machine, as before
refused            over the budget otherwise: :class:`~worker.errors.SpecError` naming the
                   estimate, the budget and the settings that would let the job run
=================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.data.sizes import gib
from worker.distributed.batch import SMALL_DATA_BYTES
from worker.distributed.head import PlanSizes, plan_sizes
from worker.distributed.pairs import pair_sizes, plan_pair_tables
from worker.distributed.partitions import DATA, plan_files
from worker.errors import SpecError
from worker.settings import DaskSettings, DataSettings
from worker.spec.models import Spec
from worker.stats import Stats, stat

IN_PROCESS, CLUSTER, LOCAL_CLUSTER = "in_process", "cluster", "local_cluster"

#: The spec's algorithm that lets the placement choose one.
AUTO = "auto"


@dataclass(frozen=True)
class Family:
    """A problem family whose examples can stay in partitions on the workers.

    Attributes
    ----------
    name : str
        What refusals call it.
    algorithm : str
        The partitioned algorithm that a spec may name (with ``named``), and that ``auto``
        runs on the cluster unless L-BFGS-B applies
        (:func:`worker.algorithms.method_choice.choose_partitioned`).
    plan : callable
        ``plan(spec, roots, partition_rows, partition_bytes, data_settings)``: the family's
        partition plan of the spec, or None when the spec is not of the family.
    sizes : callable
        ``sizes(plan, data_settings)``: the plan's examples and entries, estimated before
        the data are read (:class:`~worker.distributed.head.PlanSizes`; None: not
        estimated).
    asks : str
        What a spec names to run partitioned, as refusals say it.
    named : bool
        Whether a spec naming ``algorithm`` reads its partitions wherever the budget allows
        (placed by ``solver.svrg.workers``); else only ``auto`` past the budget does, and a
        named algorithm reads every example in one process.
    """

    name: str
    algorithm: str
    plan: Callable[[Spec, Sequence[Path], int, int, DataSettings], Any]
    sizes: Callable[[Any, DataSettings], PlanSizes | None]
    asks: str
    named: bool


#: ``pairwise_hinge``'s tables (a calibrated model's raw parquet tables are placed as they
#: are lowered: :mod:`worker.pipeline.table_pairs`).
PAIRS = Family("pairwise_hinge tables in npy or parquet files (a calibrated model's in "
               "parquet)", "svrg_ol", plan_pair_tables, lambda plan, settings: pair_sizes(plan),
               "auto (or solver.workers)", named=False)

#: Pointwise examples in files (a calibrated model's raw parquet table is placed as it is
#: lowered: :mod:`worker.pipeline.table_pairs`).
FILES = Family("pointwise losses or a rate objective with examples in files (with rate "
               "constraints counted on them, their groups as 1-D npy files; a calibrated "
               "model's table in parquet)",
               "svrg_ol", plan_files, plan_sizes,
               "svrg_ol (or auto; with rates, auto or a game with solver.workers)",
               named=True)

#: The families that run partitioned, tried in order.
PARTITIONED_FAMILIES: tuple[Family, ...] = (FILES, PAIRS)


def families_text() -> str:
    """The partitioned families as a refusal names them."""
    return "; ".join(f"{family.asks} on {family.name}" for family in PARTITIONED_FAMILIES)


@dataclass(frozen=True)
class PlacementStats(Stats):
    """The placement's record (:mod:`worker.stats`; docs/scale.md#the-fields): where the job
    ran and why, and the estimates in bytes: the whole job in one process, the budget it was
    checked against, the driver's share and the largest worker's (None: not known)."""

    placement: str
    placement_reason: str
    in_process_bytes: int | None = stat("in_process_bytes_estimate")
    budget: int | None = stat("max_job_bytes")
    driver_bytes: int | None = stat("driver_bytes_estimate")
    worker_bytes: int | None = stat("worker_bytes_estimate")


@dataclass(frozen=True)
class Placement:
    """Where the job runs and why (module docstring).

    ``workers`` is what the executor is opened with (0: this process; None: the scheduler's
    workers, or one per core on a LocalCluster; n), ``partitioned`` whether the examples stay
    in the plan's partitions (else this process compiles them; ``auto``'s method on
    partitions: :func:`worker.algorithms.method_choice.choose_partitioned`)."""

    where: str
    reason: str
    in_process_bytes: int | None
    budget: int | None
    workers: int | None = 0
    partitioned: bool = False

    def stats(self, driver_bytes: int, worker_bytes: Sequence[int] = ()) -> PlacementStats:
        """The record, with the driver's estimate and each worker's (the largest kept)."""
        return PlacementStats(self.where, self.reason, self.in_process_bytes, self.budget,
                              driver_bytes, max(worker_bytes, default=None))

    def summary(self, driver_bytes: int, worker_bytes: Sequence[int] = ()) -> dict[str, Any]:
        """What ``validate`` says of the placement: where, why, the estimates (bytes) and
        each worker's."""
        return {"where": self.where, "reason": self.reason,
                "in_process_bytes": self.in_process_bytes, "max_job_bytes": self.budget,
                "driver_bytes": driver_bytes, "worker_bytes": list(worker_bytes)}


def reads_partitions(algorithm: str) -> bool:
    """Whether a spec naming ``algorithm`` reads its partitions wherever the budget allows:
    the partitioned algorithm of a :attr:`Family.named` family."""
    return any(family.named and family.algorithm == algorithm
               for family in PARTITIONED_FAMILIES)


def planned(spec: Spec, roots: Sequence[Path], partition_rows: int, partition_bytes: int,
            settings: DataSettings) -> tuple[Family, Any] | None:
    """The first partitioned family that plans the spec's examples, and its plan; None when
    no family takes the spec."""
    for family in PARTITIONED_FAMILIES:
        plan = family.plan(spec, roots, partition_rows, partition_bytes, settings)
        if plan is not None:
            return family, plan
    return None


def place(spec: Spec, family: Family, estimate: int | None, budget: int | None,
          file_bytes: int, cluster: DaskSettings) -> Placement:
    """The placement of a job of ``family`` whose examples are planned in partitions
    (module docstring).

    Parameters
    ----------
    spec : Spec
    family : Family
    estimate : int or None
        Bytes the whole job would hold in one process (None: not estimated).
    budget : int or None
        ``LIGHTTOUCH_MAX_JOB_BYTES`` as the job is checked (None: not checked).
    file_bytes : int
        Bytes of the plan's files.
    cluster : DaskSettings

    Raises
    ------
    SpecError
        At ``objective.data``: over the budget with nowhere else to run.
    """
    fits = budget is None or estimate is None or estimate <= budget
    requested, address = spec.solver.algorithm, cluster.dask_scheduler
    if requested == family.algorithm and family.named:
        return _partitioned(spec, estimate, budget, fits, file_bytes, address)
    if fits:
        return Placement(IN_PROCESS, _fits(estimate, budget), estimate, budget)
    if requested != AUTO:
        raise _refusal(estimate, budget, f"solver.algorithm {requested} reads every example "
                                         f"in one process")
    if not address:
        raise _refusal(estimate, budget, "no LIGHTTOUCH_DASK_SCHEDULER is set")
    return Placement(CLUSTER, f"{_over(estimate, budget)}the examples stay in partitions on "
                     f"the workers of the Dask cluster at {address} (LIGHTTOUCH_DASK_SCHEDULER"
                     f"), where auto's method reads them", estimate,
                     budget, workers=None, partitioned=True)


def _partitioned(spec: Spec, estimate: int | None, budget: int | None, fits: bool,
                 file_bytes: int, address: str | None) -> Placement:
    """The placement of a job that asks for the family's partitioned algorithm itself:
    where ``solver.svrg.workers`` and the budget put its partitions."""
    workers = spec.solver.svrg.workers
    workers = None if workers == AUTO else workers        # "auto": as the settings decide
    figures = dict(in_process_bytes=estimate, budget=budget, partitioned=True)
    if workers == 0 or (fits and workers is None and file_bytes < SMALL_DATA_BYTES):
        if not fits:
            raise _refusal(estimate, budget, "solver.svrg.workers is 0, which holds every "
                                             "partition in this process")
        why = "solver.svrg.workers is 0" if workers == 0 else \
            f"the files hold under {gib(SMALL_DATA_BYTES)}"
        return Placement(IN_PROCESS, f"{why}: the partitions are read in this process",
                         workers=0, **figures)
    over = "" if fits else _over(estimate, budget)
    if address:
        return Placement(CLUSTER, f"{over}the partitions are read by the workers of the Dask "
                         f"cluster at {address} (LIGHTTOUCH_DASK_SCHEDULER)", workers=workers,
                         **figures)
    if workers is None and not fits:
        raise _refusal(estimate, budget, "no LIGHTTOUCH_DASK_SCHEDULER is set")
    return Placement(LOCAL_CLUSTER, f"{over}the partitions are read by a LocalCluster on this "
                     f"machine (solver.svrg.workers: {workers or 'auto'}; no "
                     f"LIGHTTOUCH_DASK_SCHEDULER)", workers=workers, **figures)


def workers_placement(workers: int, budget: int | None, cluster: DaskSettings,
                      how: str) -> Placement:
    """The placement of data read in partitions because ``solver.workers`` asks
    (``pairwise_hinge`` tables, :mod:`worker.distributed.pairs`; examples with rate
    constraints, :mod:`worker.distributed.rate_parts`), ``how`` says how they are cut: this
    process for 0, the cluster at ``LIGHTTOUCH_DASK_SCHEDULER`` when one is set, else a
    ``LocalCluster`` of ``workers``. The whole job is never estimated in one process
    (None)."""
    address = cluster.dask_scheduler
    why = f"solver.workers is {workers}: {how}"
    if workers == 0:
        return Placement(IN_PROCESS, f"{why} in this process", None, budget, workers=0,
                         partitioned=True)
    if address:
        return Placement(CLUSTER, f"{why} by the workers of the Dask cluster at {address} "
                         "(LIGHTTOUCH_DASK_SCHEDULER)", None, budget, workers=workers,
                         partitioned=True)
    return Placement(LOCAL_CLUSTER, f"{why} by a LocalCluster of {workers} on this machine "
                     "(no LIGHTTOUCH_DASK_SCHEDULER)", None, budget, workers=workers,
                     partitioned=True)


def in_process(estimate: int, budget: int | None, why: str) -> Placement:
    """The placement of a job whose examples this process reads (no partitioned family
    takes it, ``why``), whose compiled ``estimate`` was checked against ``budget``."""
    return Placement(IN_PROCESS, f"{why}; {_fits(estimate, budget)}", estimate, budget)


def _fits(estimate: int | None, budget: int | None) -> str:
    if budget is None:
        return "no memory budget is checked"
    if estimate is None:
        return "its size is known only once read"
    return (f"its in-process estimate of {gib(estimate)} fits the per-job budget of "
            f"{gib(budget)} (LIGHTTOUCH_MAX_JOB_BYTES)")


def _over(estimate: int | None, budget: int | None) -> str:
    return (f"its in-process estimate of {gib(estimate)} exceeds the per-job budget of "
            f"{gib(budget)} (LIGHTTOUCH_MAX_JOB_BYTES): ")


def _refusal(estimate: int | None, budget: int | None, why: str) -> SpecError:
    """The refusal of a job over the budget with nowhere else to run (module docstring)."""
    return SpecError.at(DATA, (
        f"the job would hold about {gib(estimate)} in one process (in-process estimate "
        f"{estimate:,} bytes), over the per-job budget of {gib(budget)} ({budget:,} bytes, "
        f"LIGHTTOUCH_MAX_JOB_BYTES), and {why}. To run it: set LIGHTTOUCH_DASK_SCHEDULER to "
        f"a Dask scheduler's address (the examples then stay in partitions on its workers), "
        f"raise LIGHTTOUCH_MAX_JOB_BYTES on a machine with the memory, or shrink the data. "
        f"Partitioned: {families_text()}"))
