"""Kernel inputs from a compiled problem: problem arrays, run configuration, fresh state."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.kernels.layout import (
    AVERAGE_START,
    ITERATION,
    N_COUNTERS,
    N_SCALARS,
    P_RATE,
    RADIUS,
    STEP_SCHEDULE,
    KernelState,
    ProblemArrays,
    RunConfig,
)
from worker.kernels.random import seed_state
from worker.kernels.sumtree import new_tree
from worker.problem.compiled import QUADRATIC, CompiledProblem
from worker.problem.csr import as_csr, kernel_parts
from worker.problem.weights import draw_arrays

#: DoG's initial radius r_eps = DOG_START (1 + |w(1)|) (Ivgi, Hinder & Carmon 2023, §3).
DOG_START = 1e-6



#: Rows are padded to a fixed width when that stores at most this many times the entries.
PAD_SLACK = 1.25
#: Rows :func:`_padded_rows` pads at once.
PAD_ROWS = 8192


def _padded_rows(matrix: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """CSR parts with every row padded by explicit zeros to the longest row's length W, when
    that costs little (W <= 2, or at most ``PAD_SLACK`` times the entries), and that W (0:
    rows left ragged).

    Row i then lies at entries i W .. i W + W - 1, so the kernels find it without reading the
    row pointers, one random memory access less per sampled example; ordering and lattice
    constraints (W = 2) get a dedicated path (:func:`worker.kernels.constraints.constraint_value`).
    A padding entry repeats the row's last column (or column 0 in an empty row) with value 0,
    so sums and the coordinates a row touches are unchanged. Padded rows are filled a block
    of :data:`PAD_ROWS` at a time, so the only arrays of the matrix's size are the result.

    Returns
    -------
    indptr : ndarray of int64, shape (rows+1,)
    indices, data : ndarray, shape (nnz,), or (rows W,) when padded
    width : int
    """
    matrix = as_csr(matrix)
    counts = np.diff(matrix.indptr)
    width = int(counts.max()) if counts.size else 0
    if width == 0 or (width > 2 and width * counts.size > PAD_SLACK * matrix.nnz):
        return kernel_parts(matrix) + (0,)
    if counts.min() == width:
        return (np.arange(0, width * counts.size + 1, width, dtype=np.int64),
                matrix.indices.astype(np.int64),
                np.ascontiguousarray(matrix.data, dtype=np.float64), width)
    indices = np.empty(width * counts.size, dtype=np.int64)
    data = np.zeros(width * counts.size)
    for start in range(0, counts.size, PAD_ROWS):
        _pad_block(matrix[start:start + PAD_ROWS], width, indices[width * start:],
                   data[width * start:])
    return np.arange(0, width * counts.size + 1, width, dtype=np.int64), indices, data, width


def _pad_block(block: sp.csr_matrix, width: int, indices: np.ndarray,
               data: np.ndarray) -> None:
    """Write the rows of ``block`` (r, d), each padded to ``width``, into the first r width
    entries of ``indices`` and ``data`` (:func:`_padded_rows`)."""
    counts = np.diff(block.indptr)
    rows = np.repeat(np.arange(counts.size), counts)
    slots = np.arange(block.nnz) - block.indptr[rows] + width * rows
    last = np.zeros(counts.size, dtype=np.int64)
    last[counts > 0] = block.indices[block.indptr[1:][counts > 0] - 1]
    indices[:width * counts.size] = np.repeat(last, width)
    indices[slots], data[slots] = block.indices, block.data


def _difference_rows(indices: np.ndarray, data: np.ndarray,
                     width: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Two-entry rows that all read c (w_a - w_b) for one c > 0, each reordered so that its
    positive entry comes first, and that c; otherwise the rows unchanged and c = 0.

    Ordering, monotonicity and lattice constraints have this form after normalization; the
    kernels then check one without reading its coefficients
    (:func:`worker.kernels.constraints.constraint_value`).
    """
    if width != 2 or data.size == 0:
        return indices, data, 0.0
    first, second = data[0::2], data[1::2]
    scale = abs(float(first[0]))
    if scale == 0.0 or not (np.all(np.abs(first) == scale) and np.all(second == -first)):
        return indices, data, 0.0
    swap = np.repeat(first < 0, 2)
    order = np.arange(data.size) ^ swap.astype(np.int64)   # 2i <-> 2i + 1 where swapped
    return indices[order], data[order], scale


def group_partition(m: int, n_groups: int) -> np.ndarray:
    """Split constraints 0..m-1 into n_groups consecutive blocks of size <= ceil(m/n_groups).

    Returns
    -------
    group_ptr : ndarray, shape (G+1,)
        Group g holds constraints group_ptr[g] .. group_ptr[g+1] - 1.
    """
    n_groups = max(1, min(n_groups, m)) if m else 0
    size = -(-m // n_groups) if n_groups else 0
    n_groups = -(-m // size) if size else 0
    return np.minimum(np.arange(n_groups + 1, dtype=np.int64) * size, m)


def column_indices(indices: np.ndarray, d: int) -> np.ndarray:
    """Column indices as the kernels read them: uint32 when every column < d fits, else as
    given (int64).

    A sampled example or a checked constraint then reads half the index bytes, and the
    compiled loops index without the test for a negative index that an int64 needs
    (measured: docs/benchmarks.md#iterations-per-second).

    Parameters
    ----------
    indices : ndarray of int64, shape (nnz,)
    d : int
        Number of columns.
    """
    return indices.astype(np.uint32) if d <= np.iinfo(np.uint32).max else indices


def problem_arrays(problem: CompiledProblem, n_groups: int) -> ProblemArrays:
    """The numba view of a problem, with constraints aggregated into n_groups groups."""
    objective = problem.objective
    x_indptr, x_indices, x_data, x_width = _padded_rows(objective.features)
    q_indptr, q_indices, q_data = kernel_parts(objective.quadratic)
    a_indptr, a_indices, a_data, a_width = _padded_rows(problem.constraints.matrix)
    a_indices, a_data, a_scale = _difference_rows(a_indices, a_data, a_width)
    x_indices, a_indices = (column_indices(x_indices, problem.d),
                            column_indices(a_indices, problem.d))
    return ProblemArrays(
        kind=np.int64(objective.kind), quadratic=objective.kind == QUADRATIC,
        l2=float(objective.l2), l1=float(objective.l1),
        x_indptr=x_indptr, x_indices=x_indices, x_data=x_data, x_width=x_width,
        x_entries=int(objective.features.nnz),
        **draw_arrays(objective.weights),
        labels=np.ascontiguousarray(objective.labels, dtype=np.float64),
        q_indptr=q_indptr, q_indices=q_indices, q_data=q_data,
        linear=np.ascontiguousarray(objective.linear, dtype=np.float64),
        a_indptr=a_indptr, a_indices=a_indices, a_data=a_data,
        rhs=np.ascontiguousarray(problem.constraints.rhs, dtype=np.float64),
        a_width=a_width, a_entries=int(problem.constraints.matrix.nnz), a_scale=a_scale,
        rhs_zero=bool(not np.any(problem.constraints.rhs)),
        group_ptr=group_partition(problem.m, n_groups),
        lower=np.ascontiguousarray(problem.lower, dtype=np.float64),
        upper=np.ascontiguousarray(problem.upper, dtype=np.float64),
    )


def operation_costs(arrays: ProblemArrays) -> tuple[float, float]:
    """(cost of one f sample, cost of one group check) in nonzeros touched (§5.2), counted
    before padding so that the rows' layout does not change the minibatch sizes."""
    d = arrays.lower.shape[0]
    if arrays.quadratic:
        cost_f = float(arrays.q_data.shape[0] + d)
    else:
        n = max(arrays.labels.shape[0], 1)
        cost_f = 1.0 + arrays.x_entries / n
    m = arrays.rhs.shape[0]
    n_groups = max(arrays.group_ptr.shape[0] - 1, 1)
    cost_g = (m / n_groups) * (1.0 + arrays.a_entries / max(m, 1))
    return cost_f, max(cost_g, 1.0)


def run_config(arrays: ProblemArrays, *, mode: int, gamma: float, eta_w: float, eta_p: float,
               strong_convexity: float, minibatch: tuple[int, int, int] | None,
               lazy: bool, nu: float = 0.999, step_rule: int = STEP_SCHEDULE) -> RunConfig:
    """A RunConfig; ``minibatch=None`` selects the automatic sizes of §5.2; ``step_rule`` one
    of the ``STEP_*`` rules of :mod:`worker.kernels.layout` (``eta_w`` multiplies it)."""
    cost_f, cost_g = operation_costs(arrays)
    k_f, k_g, k_p = minibatch if minibatch is not None else (2, 0, 0)
    return RunConfig(mode=mode, gamma=float(gamma), eta_w=float(eta_w), eta_p=float(eta_p),
                     strong_convexity=float(strong_convexity), k_f=k_f, k_g=k_g, k_p=k_p,
                     lazy=bool(lazy), nu=float(nu), cost_f=cost_f, cost_g=cost_g,
                     step_rule=int(step_rule))


def new_state(arrays: ProblemArrays, w0: np.ndarray, seed: int) -> KernelState:
    """Fresh state at iterate w0 (shape (d,)), iteration 1, RNG seeded from ``seed``."""
    d = w0.shape[0]
    n_groups = arrays.group_ptr.shape[0] - 1
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ITERATION] = 1
    counters[AVERAGE_START] = 1
    scalars = np.zeros(N_SCALARS)
    scalars[RADIUS] = DOG_START * (1.0 + float(np.linalg.norm(w0)))
    scalars[P_RATE] = np.nan
    return KernelState(
        w=np.array(w0, dtype=np.float64), acc=np.zeros(d), last=np.ones(d, dtype=np.int64),
        gbuf=np.zeros(d), touch_mark=np.zeros(d, dtype=np.int64),
        touched=np.zeros(d, dtype=np.int64),
        cbuf=np.zeros(d), ctouch_mark=np.zeros(d, dtype=np.int64),
        ctouched=np.zeros(d, dtype=np.int64),
        log_w=np.zeros(n_groups), stamp=np.ones(n_groups, dtype=np.int64),
        mu=np.zeros(n_groups), tree=new_tree(n_groups),
        vlist=np.zeros(n_groups, dtype=np.int64), vpos=np.zeros(n_groups, dtype=np.int64),
        weights=np.zeros(n_groups), pmark=np.zeros(n_groups, dtype=np.int64),
        sampled=np.zeros(n_groups, dtype=np.int64), sampled_viol=np.zeros(n_groups),
        counters=counters, scalars=scalars, rng=seed_state(seed),
        example_rng=np.zeros(2, dtype=np.uint64),
        origin=np.array(w0, dtype=np.float64), squares=np.zeros(d),
        p_weight=np.ones(n_groups), p_factor=np.ones(n_groups),
        check_mark=np.zeros(n_groups, dtype=np.int64), check_value=np.zeros(n_groups),
        check_row=np.zeros(n_groups, dtype=np.int64),
    )
