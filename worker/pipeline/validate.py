"""Dry run of a spec: the same prologue as a solve (:mod:`worker.pipeline.prologue`: parse,
read the data, plan partitions, compile, choose the method), then sizes, algorithm, memory;
or only its placement (:func:`place_spec`), decided before the data are read, as a service
admits a job."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worker.data.references import data_refs
from worker.distributed.partitions import readable
from worker.distributed.raw_tables import raw_example_table, raw_pair_tables
from worker.model_types import MODEL_TYPES
from worker.model_types.record import as_given
from worker.pipeline.prologue import compiled_job, job_source, lowered_job, placed
from worker.pipeline.table_pairs import raw_tables_placed
from worker.settings import JobSettings, call_settings
from worker.spec.models import Spec, parse_spec


def summarize_spec(raw: Any, roots: Sequence[Path] | None = None, *,
                   max_job_bytes: int | None = None,
                   settings: JobSettings | None = None) -> dict[str, Any]:
    """Sizes d, m, n, the algorithm ``auto`` would pick, a memory estimate and notes.

    Parameters
    ----------
    raw : dict or Spec
        The problem spec.
    roots, max_job_bytes, settings : optional
        As :func:`worker.pipeline.solve.solve` takes them: ``settings`` resolved by the
        caller at its edge, else resolved here from ``roots``, ``max_job_bytes`` and the
        environment.

    Returns
    -------
    dict
        ``valid``, ``sizes``, ``algorithm``, ``memory_estimate_bytes`` (this process's),
        ``placement`` (where the job runs and why, with the estimates of the whole job in
        one process, the driver and each worker: docs/scale.md#the-fields) and ``notes``.

    Raises
    ------
    SpecError, DataError
        Naming the field when the spec cannot be solved as given, or when its memory
        estimate exceeds ``max_job_bytes`` (checked on the spec alone first, before any
        data are read).
    """
    spec = parse_spec(raw)
    settings = call_settings(settings, roots, max_job_bytes)
    lowered = lowered_job(spec, settings)
    with compiled_job(lowered.spec, lowered.source, settings) as job:
        problem = job.problem
        return {
            "valid": True,
            "sizes": {"parameters": problem.d, "constraints": problem.m_total,
                      "examples": problem.examples if job.batch is None else job.batch.n},
            "algorithm": job.choice.name,
            "memory_estimate_bytes": job.memory_estimate,
            "placement": job.placement.summary(job.memory_estimate, job.worker_bytes),
            "notes": list(problem.notes),
        }


def placement_reads(spec: Spec) -> bool:
    """Whether :func:`place_spec` reads any file to place the job: a calibrated model's raw
    pair tables or pointwise parquet table (their footers:
    :func:`~worker.pipeline.table_pairs.raw_tables_placed`), or
    a model its spec states as it is compiled (other models lowered from tables are read to
    be lowered), not a network, with a data reference outside the spec in
    ``objective.data`` (inline examples always run in process)."""
    return raw_pair_tables(spec) or raw_example_table(spec) or (
        MODEL_TYPES[spec.model.type].lower is as_given and not spec.network
        and any(readable(ref) for _, ref in data_refs(spec.objective)))


def place_spec(raw: Any, *, settings: JobSettings) -> dict[str, Any] | None:
    """Where the job runs and why (``where``, ``reason``), decided as its prologue decides
    it, from the data's headers and footers (and a pointwise file's head) before the rest is
    read; None when that takes reading the data (:func:`placement_reads` is False, or no
    family that runs partitioned takes the examples: the compiled estimate decides).

    Raises
    ------
    SpecError
        The declared memory over the budget; over the budget with nowhere else to run
        (:mod:`worker.distributed.placement`, at ``objective.data``); ``solver.workers`` on
        a spec it cannot partition.
    DataError
        A header or footer that cannot be read, naming the field.
    """
    spec = parse_spec(raw)
    if raw_pair_tables(spec) or raw_example_table(spec):
        found = raw_tables_placed(spec, job_source(spec, settings), settings)
        placement = None if found is None else found[0]
    elif placement_reads(spec):
        lowered = lowered_job(spec, settings)
        placement, _ = placed(lowered.spec, lowered.source, settings)
    else:
        return None
    return None if placement is None else {"where": placement.where,
                                           "reason": placement.reason}
