"""The memory a job will hold, estimated before it runs, and the per-job budget
(``LIGHTTOUCH_MAX_JOB_BYTES``): a job over it is refused naming the field that sizes it most.

Two estimates: :func:`declared_parts` from the spec alone (what a submission can be checked
against without reading any data), and :func:`memory_parts` from the compiled problem (what
validation and the work horse check once the data are read).
"""

from __future__ import annotations

from worker.candidates.hinge_lp import has_hinge_lp
from worker.data.sizes import gib
from worker.distributed.placement import families_text
from worker.errors import SpecError
from worker.losses import LOSSES, PAIRWISE_BASE, PAIRWISE_HINGE
from worker.model_types import MODEL_TYPES
from worker.problem.compiled import CompiledProblem
from worker.problem.constraint_types import CONSTRAINT_TYPES
from worker.problem.network import NetworkProblem
from worker.spec.models import EmpiricalRisk, Spec

_KERNEL_ARRAYS_PER_COORDINATE = 9   # w, running sum, stamps, two step buffers and their marks
_NETWORK_ARRAYS = 4                  # theta, direction, AdaGrad sums, the mean
#: Log weights, stamps, mu, tree (2x), lists (2), scratch (4), dense weights and factors.
_KERNEL_ARRAYS_PER_GROUP = 13
#: The compiled CSR (a float64 value and an int32 index) and the kernels' copy (int64 index).
_BYTES_PER_NONZERO = 12 + 16
#: An example's entry: the compiled CSR (12), the rows it was compiled from, which the job
#: keeps until its Result is described (12: a table's lowered features, both sides of its
#: pairs), and the kernels' copy (16) of rows padded to up to 1.25 times the entries
#: (:data:`worker.algorithms.run.arrays.PAD_SLACK`).
#: Beyond the live arrays the process keeps 9 more resident (what the allocator holds of the
#: lowering's and the compile's freed temporaries; measured at 6.1M pairs:
#: docs/benchmarks.md#scale-the-paper-lattice-from-raw-pairs).
_BYTES_PER_EXAMPLE_ENTRY = 12 + 12 + 16 * 1.25 + 9
#: An example's vectors: labels and row starts (compiled and the kernels'), and the polish's
#: and the lower bound's margins, reaches, distances, their order and masks.
_BYTES_PER_EXAMPLE = 3 * 8 + 9 * 8
#: A weighted example's more: its weight as read, divided by the mean, and the kernels'
#: running sum of the weights it is drawn by.
_BYTES_PER_WEIGHT = 3 * 8

#: A worker's entry: the partition as read (a float64 value, an int32 index) and the
#: batch kernels' rows (a float64 value, an int64 index).
_WORKER_BYTES_PER_ENTRY = 12 + 16
#: A worker's example: its label and row starts, as read and in the kernels' rows.
_WORKER_BYTES_PER_EXAMPLE = 3 * 8
#: A rate term's entry of one example in one form's sparse matrices: value and index.
_BYTES_PER_RATE_ENTRY = 8 + 4
#: The forms a rate constraint is held in (:class:`worker.problem.rates.RateSet`).
_RATE_FORMS = 2
#: A worker's weighted example's more: its weight as read and divided by the mean.
_WORKER_BYTES_PER_WEIGHT = 2 * 8

#: The polish's and the lower bound's LPs hold their kept examples' rows and the constraint
#: rows about this many times at once (taken, negated, stacked as COO, as CSR and as CSC;
#: 16 bytes an entry) ...
_LP_COPIES = 5
#: ... for at most this many kept examples (the bound's widest band at 6.1M pairs).
_LP_EXAMPLES = 2**17

#: The field each part of an estimate is charged to.
DATA, CONSTRAINTS, STATE = "objective.data", "constraints", "solver.candidates"


def _rows_bytes(rows: int, nonzeros: int) -> int:
    """Constraint rows: the CSR and the sampling state of each row."""
    return _BYTES_PER_NONZERO * nonzeros + 8 * rows * (1 + _KERNEL_ARRAYS_PER_GROUP)


def _state_bytes(d: int, candidates: int) -> int:
    """The kernels' per-coordinate arrays and the candidate snapshots, each (d,) float64."""
    return 8 * d * (_KERNEL_ARRAYS_PER_COORDINATE + candidates)


def memory_parts(problem: CompiledProblem, candidates: int) -> dict[str, int]:
    """Bytes the solve will hold, by the field that sizes them: the examples
    (``objective.data``), the constraint rows and their sampling state (``constraints``), the
    kernel state and candidate snapshots (``solver.candidates``)."""
    objective = problem.objective
    data = _examples_part(objective.n, objective.features.nnz, objective.weights is not None,
                          has_hinge_lp(problem), problem.constraints.matrix.nnz) \
        + _BYTES_PER_NONZERO * objective.quadratic.nnz
    rows = _rows_bytes(problem.m, problem.constraints.matrix.nnz)
    return {DATA: int(data), CONSTRAINTS: int(rows),
            STATE: _state_bytes(problem.d, candidates)}


def _examples_part(n: int, entries: int, weighted: bool, hinge_lp: bool,
                   constraint_entries: int) -> int:
    """Bytes of ``n`` examples with ``entries`` nonzeros (and their weights), with the
    polish's and the bound's LP copies when the objective is a hinge LP over constraint rows
    of ``constraint_entries`` nonzeros."""
    data = examples_bytes(n, entries) + (_BYTES_PER_WEIGHT * n if weighted else 0)
    if hinge_lp and n > 0:
        kept = min(n, _LP_EXAMPLES) * entries / n
        data += 16 * _LP_COPIES * (kept + constraint_entries)
    return int(data)


def rate_bytes(terms: int) -> int:
    """Bytes an example's shares of ``terms`` rate terms take at most: an entry (value and
    index) in each form's sparse matrices, the proxy and the relaxed
    (:mod:`worker.distributed.rate_parts`)."""
    return _RATE_FORMS * _BYTES_PER_RATE_ENTRY * terms


def examples_bytes(n: int, entries: int) -> int:
    """Bytes ``n`` examples with ``entries`` feature nonzeros take in one process."""
    return int(_BYTES_PER_EXAMPLE_ENTRY * entries + _BYTES_PER_EXAMPLE * n)


def planned_parts(spec: Spec, n: int, entries: int) -> dict[str, int]:
    """:func:`memory_parts` before reading the data, for ``n`` examples with ``entries``
    nonzeros estimated from a partition plan (:mod:`worker.distributed.head`, or every cell
    of a pair's tables: :func:`worker.distributed.pairs.pair_sizes`): their bytes, counted as
    the compiled problem's (with their weights and the hinge LP's copies when the spec has
    them), and the parts the spec declares."""
    objective = spec.objective
    hinge_lp = False        # a rate objective has no hinge LP (its proxy is not the answer's)
    if isinstance(objective, EmpiricalRisk):
        base = PAIRWISE_BASE.name if objective.loss == PAIRWISE_HINGE else objective.loss
        hinge_lp = LOSSES[base].piecewise_linear and objective.l1 == 0 and objective.l2 == 0
    _, constraint_entries = _declared_rows(spec)
    return {**declared_parts(spec),
            DATA: _examples_part(n, entries, getattr(objective.data, "weights", None) is not None,
                                 hinge_lp,
                                 constraint_entries)}


def worker_shares(n: int, entries: int, partitions: int, workers: int,
                  weighted: bool = False, rate_terms: int = 0) -> tuple[int, ...]:
    """Bytes each of ``workers`` Dask workers holds of ``n`` examples with ``entries``
    nonzeros in ``partitions`` partitions, dealt evenly (the scheduler places them, so a
    worker may hold more): the chunk as read and the batch kernels' rows, with their
    weights when ``weighted`` and their shares of ``rate_terms`` rate terms
    (:func:`rate_bytes`); () in process."""
    if workers <= 0 or partitions <= 0:
        return ()
    per_example = _WORKER_BYTES_PER_EXAMPLE + (_WORKER_BYTES_PER_WEIGHT if weighted else 0) \
        + rate_bytes(rate_terms)
    per_partition = (_WORKER_BYTES_PER_ENTRY * entries + per_example * n) / partitions
    return tuple(int(per_partition * (partitions // workers + (k < partitions % workers)))
                 for k in range(workers))


def network_memory_parts(problem: NetworkProblem, candidates: int) -> dict[str, int]:
    """:func:`memory_parts` of a network problem: every term's, group loss's and the rates'
    examples, and the parameters' state (theta, direction, AdaGrad sums) and snapshots."""
    rates = 0 if problem.rates is None else _BYTES_PER_NONZERO * problem.rates.features.nnz
    terms = problem.terms + [bounded.term for bounded in problem.bounded]
    data = sum(_BYTES_PER_NONZERO * term.features.nnz + 8 * term.n for term in terms)
    return {DATA: int(data + rates), CONSTRAINTS: 0,
            STATE: 8 * problem.d * (_NETWORK_ARRAYS + candidates)}


def _declared_parameters(spec: Spec) -> int:
    """Parameters the spec fixes, as its model type's record counts them
    (:attr:`worker.model_types.record.ModelType.declared_parameters`): a linear model's
    declared ``dimension``; an MLP's hidden layers (and its first layer when ``dimension``
    is declared); a calibrated model's outputs or lattice vertices."""
    return MODEL_TYPES[spec.model.type].declared_parameters(spec.model, spec.dimension or 0)


def declared_parts(spec: Spec) -> dict[str, int]:
    """The part of :func:`memory_parts` the spec fixes without its data: the state of a
    declared ``dimension`` or network and the rows each constraint type declares
    (:attr:`worker.problem.constraint_types.ConstraintType.declared`)."""
    rows, nonzeros = _declared_rows(spec)
    return {CONSTRAINTS: _rows_bytes(rows, nonzeros),
            STATE: _state_bytes(_declared_parameters(spec), spec.solver.candidates)}


def _declared_rows(spec: Spec) -> tuple[int, int]:
    """Constraint rows and their nonzeros that the spec's constraint types declare."""
    rows = nonzeros = 0
    for constraint in spec.constraints:
        block_rows, block_nonzeros = CONSTRAINT_TYPES[constraint.type].declared(constraint)
        rows, nonzeros = rows + block_rows, nonzeros + block_nonzeros
    return rows, nonzeros


def check_memory(parts: dict[str, int], budget: int | None) -> int:
    """The estimate's total; :class:`SpecError` naming its largest part's field if it
    exceeds ``budget`` bytes (None: no budget)."""
    total = sum(parts.values())
    if budget is not None and total > budget:
        field = max(parts, key=lambda name: parts[name])
        raise SpecError.at(field, f"the job would hold about {gib(total)} (memory estimate "
                           f"{total:,} bytes, {gib(parts[field])} of it for {field}), over "
                           f"the per-job budget of {gib(budget)} (LIGHTTOUCH_MAX_JOB_BYTES); "
                           f"shrink {_advice(field)}. Only these run partitioned on a Dask "
                           f"cluster (LIGHTTOUCH_DASK_SCHEDULER): {families_text()}")
    return total


def _advice(field: str) -> str:
    return {DATA: "the data", CONSTRAINTS: "the constraints",
            STATE: "solver.candidates or the dimension"}[field]
