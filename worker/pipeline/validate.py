"""Dry run of a spec: the same prologue as a solve (:mod:`worker.pipeline.prologue`: parse,
read the data, plan partitions, compile, choose the method), then sizes, algorithm, memory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worker.pipeline.prologue import compiled_job, lowered_job
from worker.settings import JobSettings, call_settings
from worker.spec.models import parse_spec


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
