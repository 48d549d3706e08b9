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
from worker.settings import data_roots, data_settings
from worker.spec.models import parse_spec


def summarize_spec(raw: Any, roots: Sequence[Path] | None = None, *,
                   max_job_bytes: int | None = None) -> dict[str, Any]:
    """Sizes d, m, n, the algorithm ``auto`` would pick, a memory estimate and notes.

    Raises :class:`~worker.errors.SpecError` / :class:`~worker.errors.DataError` naming the
    field when the spec cannot be solved as given, or when its memory estimate exceeds
    ``max_job_bytes`` (checked on the spec alone first, before any data are read).
    """
    spec = parse_spec(raw)
    check_memory(declared_parts(spec), max_job_bytes)
    source = DataSource(roots if roots is not None else data_roots(),
                        settings=data_settings(max_job_bytes))
    lowered = MODEL_TYPES[spec.model.type].lower(spec, source)    # the compilers' spec
    spec, source = lowered.spec, lowered.source
    if spec.network:
        problem = compile_network_problem(spec, source, MODEL_TYPES[spec.model.type])
        parts = network_memory_parts(problem, spec.solver.candidates)
    else:
        problem = compile_problem(spec, source)
        parts = memory_parts(problem, spec.solver.candidates)
    algorithm = choose_algorithm(problem, spec.solver.algorithm)
    estimate = check_memory(parts, max_job_bytes)
    return {
        "valid": True,
        "sizes": {"parameters": problem.d, "constraints": problem.m_total,
                  "examples": problem.n},
        "algorithm": algorithm,
        "memory_estimate_bytes": estimate,
        "notes": list(problem.notes),
    }
