"""Dry run of a spec: parse, read the data, compile; report sizes, algorithm, memory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worker.algorithms.registry import choose_algorithm
from worker.model_types import MODEL_TYPES
from worker.pipeline.memory import (
    check_memory,
    declared_parts,
    memory_parts,
    network_memory_parts,
)
from worker.problem.compile import DataSource, compile_problem
from worker.problem.compile_network import compile_network_problem
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
        ``valid``, ``sizes``, ``algorithm``, ``memory_estimate_bytes`` and ``notes``.

    Raises
    ------
    SpecError, DataError
        Naming the field when the spec cannot be solved as given, or when its memory
        estimate exceeds ``max_job_bytes`` (checked on the spec alone first, before any
        data are read).
    """
    spec = parse_spec(raw)
    settings = call_settings(settings, roots, max_job_bytes)
    check_memory(declared_parts(spec), settings.memory_limit)
    source = DataSource(settings.roots, settings=settings.data)
    lowered = MODEL_TYPES[spec.model.type].lower(spec, source)    # the compilers' spec
    spec, source = lowered.spec, lowered.source
    if spec.network:
        problem = compile_network_problem(spec, source, MODEL_TYPES[spec.model.type])
        parts = network_memory_parts(problem, spec.solver.candidates)
    else:
        problem = compile_problem(spec, source)
        parts = memory_parts(problem, spec.solver.candidates)
    algorithm = choose_algorithm(problem, spec.solver.algorithm)
    estimate = check_memory(parts, settings.memory_limit)
    return {
        "valid": True,
        "sizes": {"parameters": problem.d, "constraints": problem.m_total,
                  "examples": problem.n},
        "algorithm": algorithm,
        "memory_estimate_bytes": estimate,
        "notes": list(problem.notes),
    }
