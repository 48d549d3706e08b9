"""What :func:`worker.pipeline.solve.solve` and :func:`worker.pipeline.validate.summarize_spec`
share, so that a dry run sees the job as the run will: the spec's declared memory checked,
its data source and model type lowered (:func:`lowered_job`), then its problem compiled as its
kind needs — a network, rows in memory, rows left in partitions for SVRG OL, or
``pairwise_hinge``'s tables left in partitions for the LightTouch family — its memory
estimate checked and ``solver.algorithm`` resolved once (:func:`compiled_job`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from worker.algorithms.method_choice import GAMES, Choice, choose_partitioned
from worker.algorithms.registry import chosen
from worker.algorithms.run.game_rounds import ROUND_ROWS as GAME_ROUND_ROWS
from worker.algorithms.run.rounds import ROUND_ROWS
from worker.algorithms.runners.svrg_ol import serial_sample_rows
from worker.distributed.batch import PartitionedBatch, partitioned_batch
from worker.distributed.executors import executor_for
from worker.distributed.pair_batch import PairMemory, open_pairs, pair_memory
from worker.distributed.pairs import PairPlan, plan_pairs, runs_partitioned
from worker.distributed.partitions import PartitionPlan, plan_files
from worker.distributed.placement import (
    AUTO,
    IN_PROCESS,
    Placement,
    PlacementStats,
    in_process,
    place,
    planned,
    reads_partitions,
    workers_placement,
)
from worker.distributed.rate_parts import OpenedRates, has_rates, open_rates, rate_terms
from worker.errors import SpecError
from worker.model_types import MODEL_TYPES
from worker.model_types.record import Lowering
from worker.pipeline.memory import (
    DATA,
    check_memory,
    declared_parts,
    examples_bytes,
    memory_parts,
    network_memory_parts,
    planned_parts,
    rate_bytes,
    worker_shares,
)
from worker.pipeline.options import solver_options
from worker.pipeline.reporting import data_source, refuse_split
from worker.pipeline.table_pairs import PlacedSource, partitioned_lowering
from worker.problem.compile import DataSource, compile_problem
from worker.problem.compile_network import compile_network_problem
from worker.problem.compiled import CompiledProblem
from worker.problem.network import NetworkProblem
from worker.settings import JobSettings
from worker.spec.models import Spec

#: Why ``solver.workers`` is refused for a spec it cannot partition.
NOT_PARTITIONED = ("partitions the tables of a pairwise_hinge objective given as npy or "
                   "parquet files (a calibrated model's raw tables as parquet; no inline "
                   "data, data: URIs or sha256), without rate "
                   "constraints, solved by auto, lighttouch, fulltouch or svrg_ol; and the "
                   "examples of a pointwise loss in files with rate constraints counted on "
                   "them (groups as 1-D npy files), solved by auto, proxy_lagrangian or "
                   "lagrangian, or of a rate objective in files, solved by auto or "
                   "proxy_lagrangian; omit it (for svrg_ol use solver.svrg.workers)")


@dataclass(frozen=True)
class CompiledJob:
    """A job's compiled problem, the method chosen for it, its memory estimate (bytes), where
    it runs (its placement, the placement's stats record and each worker's estimate) and,
    for rows left in partitions, the plan and the open partitions (and, for pairs, the
    driver's and each worker's estimate)."""

    problem: CompiledProblem | NetworkProblem
    choice: Choice
    memory_estimate: int
    placement: Placement
    placement_stats: PlacementStats
    worker_bytes: tuple[int, ...] = ()
    plan: PartitionPlan | PairPlan | None = None
    batch: PartitionedBatch | None = None
    pairs: PairMemory | None = None


def lowered_job(model: Spec, settings: JobSettings) -> Lowering:
    """Check the memory the spec declares, then lower its model type over the source of its
    data (a held-out share with ``validation.fraction``): a calibrated model's raw pair
    tables read in partitions are placed and lowered without reading them whole
    (:mod:`worker.pipeline.table_pairs`)."""
    source = job_source(model, settings)
    return partitioned_lowering(model, source, settings) \
        or MODEL_TYPES[model.model.type].lower(model, source)


def job_source(model: Spec, settings: JobSettings) -> DataSource:
    """Check the memory the spec declares, then the source of its data (a held-out share
    with ``validation.fraction``)."""
    check_memory(declared_parts(model), settings.memory_limit)
    return data_source(model, settings.roots, settings.data)


@contextmanager
def compiled_job(model: Spec, source: DataSource, settings: JobSettings) -> Iterator[CompiledJob]:
    """The lowered spec's problem compiled as its kind needs (module docstring), open while
    the block runs (the partitions, when there are any)."""
    candidates = model.solver.candidates
    if model.network:  # networks, multiclass and robust objectives are never partitioned
        problem = compile_network_problem(model, source, MODEL_TYPES[model.model.type])
        estimate = check_memory(network_memory_parts(problem, candidates),
                                settings.memory_limit)
        yield _in_memory(problem, chosen(problem, model.solver.algorithm), estimate, settings,
                         "a network, multiclass or robust objective")
        return
    placement, plan = placed(model, source, settings)
    if placement is None or not placement.partitioned:
        problem = compile_problem(model, source)
        estimate = check_memory(memory_parts(problem, candidates), settings.memory_limit)
        choice = chosen(problem, model.solver.algorithm)
        if placement is None:
            yield _in_memory(problem, choice, estimate, settings,
                             "no family that runs partitioned takes these examples")
        else:
            yield CompiledJob(problem, choice, estimate, placement, placement.stats(estimate))
        return
    refuse_split(model)
    opened = _pairs_job if isinstance(plan, PairPlan) else _files_job
    with opened(model, source, settings, placement, plan) as job:
        yield job


def placed(model: Spec, source: DataSource,
           settings: JobSettings) -> tuple[Placement | None, PartitionPlan | PairPlan | None]:
    """Where a lowered spec that is not a network runs, decided from its data's headers
    (and, for pointwise files, their head) before the rest is read; and the partition plan
    (None, None: no family that runs partitioned takes its examples).

    Raises
    ------
    SpecError
        ``solver.workers`` on a spec it cannot partition; a job over the budget with
        nowhere else to run (:mod:`worker.distributed.placement`).
    """
    if isinstance(source, PlacedSource):
        return source.placement, source.plan
    solver = model.solver
    if runs_partitioned(model):
        plan = plan_pairs(model, source.roots, solver.svrg.partition_rows, settings.data)
        return workers_placement(solver.workers, settings.memory_limit, settings.cluster,
                                 "the pairs' tables are read in row-aligned partitions"), plan
    if solver.workers is not None:
        plan = _rated_plan(model, source, settings)
        placement = workers_placement(solver.workers, settings.memory_limit, settings.cluster,
                                      "the examples are read in partitions")
        return placement, plan
    return _placed(model, source, settings)


def _rated_plan(model: Spec, source: DataSource, settings: JobSettings) -> PartitionPlan:
    """The partition plan of pointwise examples in files with rate constraints or a rate
    objective, for ``solver.workers``; refused for any other spec."""
    plan = None
    if has_rates(model) and model.solver.algorithm in (AUTO, *GAMES):
        plan = plan_files(model, source.roots, model.solver.svrg.partition_rows,
                          settings.cluster.partition_bytes, settings.data)
    if plan is None:
        raise SpecError.at("solver.workers", NOT_PARTITIONED)
    return plan


@contextmanager
def _files_job(model: Spec, source: DataSource, settings: JobSettings, placement: Placement,
               plan: PartitionPlan) -> Iterator[CompiledJob]:
    """Pointwise examples left in the plan's partitions, read where the placement says; the
    driver's estimate counts the most rows a round brings it (:func:`sampled_rows`)."""
    with executor_for(placement.workers, settings.cluster) as executor:
        batch = partitioned_batch(executor, plan, model.solver.seed, settings.data)
        rates = open_rates(batch, plan, model, settings.data) if has_rates(model) \
            else OpenedRates(None, None)
        problem = compile_problem(model, source, width_elsewhere=batch.d,
                                  rates_elsewhere=rates.constraints,
                                  true_rate_elsewhere=rates.objective)
        if model.solver.algorithm == AUTO:
            choice = choose_partitioned(problem, AUTO)
            choice = replace(choice, reason=f"{placement.reason}; {choice.reason}")
        else:
            choice = chosen(problem, model.solver.algorithm)
            if placement.where != IN_PROCESS:
                choice = replace(choice, reason=f"{choice.reason}; {placement.reason}")
        sampled, terms = sampled_rows(choice.name, model, settings, batch.n), rate_terms(model)
        parts = memory_parts(problem, model.solver.candidates) | {
            DATA: examples_bytes(sampled, batch.entries * sampled // batch.n)
            + sampled * rate_bytes(terms)}
        estimate = check_memory(parts, settings.memory_limit)
        shares = worker_shares(batch.n, batch.entries, len(batch.parts), batch.workers,
                               plan.weighted, terms)
        yield CompiledJob(problem, choice, estimate, placement,
                          placement.stats(estimate, shares), shares, plan, batch)


def sampled_rows(method: str, model: Spec, settings: JobSettings, n: int) -> int:
    """Rows of the ``n`` on partitions that one round of ``method`` brings the driver at
    most: none for L-BFGS-B (it moves d-vectors), SVRG OL's largest serial sample
    (:func:`~worker.algorithms.runners.svrg_ol.serial_sample_rows`), a game's round
    (:data:`~worker.algorithms.run.game_rounds.ROUND_ROWS`), else a LightTouch
    round's :data:`~worker.algorithms.run.rounds.ROUND_ROWS`."""
    if method == "lbfgsb":
        return 0
    if method in GAMES:
        return min(n, GAME_ROUND_ROWS)
    if method == "svrg_ol":
        return min(n, serial_sample_rows(solver_options(model.solver, settings.cluster), n))
    return min(n, ROUND_ROWS)


def _in_memory(problem: CompiledProblem | NetworkProblem, choice: Choice, estimate: int,
               settings: JobSettings, why: str) -> CompiledJob:
    """A job whose examples no partitioned family takes (``why``), compiled in memory."""
    placement = in_process(estimate, settings.memory_limit, why)
    return CompiledJob(problem, choice, estimate, placement, placement.stats(estimate))


def _placed(model: Spec, source: DataSource,
            settings: JobSettings) -> tuple[Placement | None, object]:
    """The placement of a job whose examples a partitioned family plans, and the plan;
    (None, None) when no family does. Only ``svrg_ol`` is planned without a budget to
    check (as it always was): ``auto`` and the others then compile in memory."""
    if settings.memory_limit is None and not reads_partitions(model.solver.algorithm):
        return None, None
    found = planned(model, source.roots, model.solver.svrg.partition_rows,
                    settings.cluster.partition_bytes, settings.data)
    if found is None:
        return None, None
    family, plan = found
    estimate = None
    if settings.memory_limit is not None:
        sizes = family.sizes(plan, settings.data)
        if sizes is not None:
            estimate = sum(planned_parts(model, sizes.n, sizes.entries).values())
    return place(model, family, estimate, settings.memory_limit, plan.size,
                 settings.cluster), plan


@contextmanager
def _pairs_job(model: Spec, source: DataSource, settings: JobSettings, placement: Placement,
               plan: PairPlan) -> Iterator[CompiledJob]:
    """``pairwise_hinge``'s tables left in partitions (:mod:`worker.distributed.pairs`),
    read where the placement says (``solver.workers``, or past the budget the cluster); the
    driver's estimate is checked against the budget."""
    solver = model.solver
    with open_pairs(plan, placement.workers, settings.cluster, solver.seed,
                    settings.data) as batch:
        problem = compile_problem(model, source, width_elsewhere=batch.d)
        choice = choose_partitioned(problem, solver.algorithm)
        choice = replace(choice, reason=f"{placement.reason}; {choice.reason}")
        memory = pair_memory(plan, batch.d, sampled_rows(choice.name, model, settings, plan.n),
                             batch.workers)
        parts = memory_parts(problem, solver.candidates) | {DATA: memory.driver_bytes}
        estimate = check_memory(parts, settings.memory_limit)
        shares = (memory.worker_bytes,) * memory.workers
        yield CompiledJob(problem, choice, estimate, placement,
                          placement.stats(memory.driver_bytes, shares), shares, plan, batch,
                          memory)
