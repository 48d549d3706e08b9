"""Dry run of a spec: parse, read the data, compile; report sizes, algorithm, memory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worker.algorithms.registry import choose_algorithm
from worker.problem.compile import compile_problem
from worker.problem.compiled import CompiledProblem
from worker.settings import data_roots
from worker.spec.models import parse_spec

_KERNEL_ARRAYS_PER_COORDINATE = 9   # w, running sum, stamps, two step buffers and their marks
_KERNEL_ARRAYS_PER_GROUP = 9        # log weights, stamps, mu, tree (2x), lists, scratch


def memory_estimate(problem: CompiledProblem, candidates: int) -> int:
    """Bytes the solve will hold: data, constraint rows, kernel state, candidate snapshots."""
    objective = problem.objective
    data = 12 * (objective.features.nnz + objective.quadratic.nnz + problem.constraints.matrix.nnz)
    state = 8 * (problem.d * (_KERNEL_ARRAYS_PER_COORDINATE + candidates)
                 + problem.m * _KERNEL_ARRAYS_PER_GROUP)
    return int(data + state + 8 * (objective.n + problem.m))


def summarize_spec(raw: Any, roots: Sequence[Path] | None = None) -> dict[str, Any]:
    """Sizes d, m, n, the algorithm ``auto`` would pick, a memory estimate and notes.

    Raises :class:`~worker.errors.SpecError` / :class:`~worker.errors.DataError` naming the
    field when the spec cannot be solved as given.
    """
    spec = parse_spec(raw)
    problem = compile_problem(spec, roots if roots is not None else data_roots())
    return {
        "valid": True,
        "sizes": {"d": problem.d, "m": problem.m_total, "n": problem.n},
        "algorithm": choose_algorithm(problem, spec.solver.algorithm),
        "memory_estimate_bytes": memory_estimate(problem, spec.solver.candidates),
        "notes": list(problem.notes),
    }
