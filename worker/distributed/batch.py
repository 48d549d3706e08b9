"""The data-parallel rounds of SVRG OL (Cutkosky & Busa-Fekete, Algorithm 1 lines 4-6, §7-§8.2)
as map-reduces over row partitions, in this process or on a Dask cluster.

Both backends (:mod:`worker.distributed.executors`) run the same plan, so the same seed
gives the same bits:

* rows are cut into partitions: of ``partition_rows`` consecutive examples of a compiled
  problem, or as :mod:`worker.distributed.partitions` cuts the objective's files (not by
  worker count, so the answer does not depend on the cluster's size);
* every partition sums grad l_i(v_k) and l_i(v_k) over its selected rows
  (:func:`worker.kernels.svrg.gradient_sum`; which rows is a hash of seed, round and global
  row = partition offset + local row);
* the partial sums are combined by a fixed pairwise tree
  (:func:`worker.distributed.tasks.tree_reduce`): level by level, (0, 1), (2, 3), ... as in
  the paper's Spark tree aggregation (§8.2).

Where the rows come from:

* **files the workers read** (:func:`open_partitioned`, when
  :func:`worker.distributed.partitions.plan_partitions` makes a plan): each partition is
  read where it is held, with ranged reads of its own bytes. A census round
  (:mod:`worker.distributed.census`) counts rows, fixes offsets and the width d and sums
  the per-column nonzero counts (the §8.1 inverse frequencies). The driver then holds no
  examples: each round also returns the serial phase's examples (rows selected with
  probability T_k k_f / n by a hash of (seed, round, global row),
  :mod:`worker.kernels.partition_losses`), and objective values f(w) for a (K, d) block of
  points are one more map-reduce (:meth:`PartitionedBatch.values`).
* **a compiled problem** (inline data, ``data:`` URIs, or a layout the partition reader
  does not handle): partitions are slices of the driver's rows, shipped inside their tasks
  to Dask; the serial phase samples the driver's rows.

Partitions and the shared anchor are tasks, never scattered data, so a worker that dies is
recovered by Dask recomputing what it held (up to ``allowed-failures`` times), and a round
that cannot finish in ``LIGHTTOUCH_DASK_TIMEOUT_S`` fails the job with a
:class:`~worker.errors.SolverError` instead of waiting forever.

Where the rounds run (``solver.svrg.workers``): 0 → in this process; a number → Dask with
that many workers on a ``LocalCluster``, or the cluster at ``LIGHTTOUCH_DASK_SCHEDULER``;
``auto`` → in this process for data below :data:`SMALL_DATA_NONZEROS` nonzeros (a compiled
problem) or :data:`SMALL_DATA_BYTES` bytes (files), otherwise that cluster or a
``LocalCluster`` with one single-threaded worker per core.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from worker.distributed.census import (
    add_counts,
    census_of,
    column_counts,
    finish,
    settle,
    shifted_counts,
)
from worker.distributed.chunks import read_chunk
from worker.distributed.executors import DaskExecutor, Executor, LocalExecutor, executor_for
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import PartitionPlan
from worker.distributed.tasks import (
    add,
    combine,
    concatenated,
    partial_losses,
    partial_sum,
    partition_bounds,
    rows_in_task,
    rows_nbytes,
    rows_of,
    sample_of,
    tree_reduce,
)
from worker.distributed.weights import held_weights, tally, weights_round
from worker.kernels.layout import ProblemArrays
from worker.kernels.objective import objective_value
from worker.kernels.svrg import Rows, batch_key
from worker.problem.compiled import CompiledProblem
from worker.problem.weights import draw_arrays
from worker.settings import DataSettings
from worker.stats import Stats, stat

#: ``workers: auto`` keeps the batch phase in-process below this many feature nonzeros:
#: a cluster's rounds cost more than a serial full gradient except on data near one
#: machine's memory (measured: docs/algorithms.md#big-data-svrg-ol-and-a-dask-cluster).
SMALL_DATA_NONZEROS = 2**28

#: The same threshold for data the workers read from files, in bytes of the files.
SMALL_DATA_BYTES = 2**31

#: Salt of the key selecting the serial phase's examples (distinct from the batch's rows).
SERIAL_SALT = 0x5EED5E41A1

#: Salt of the key selecting a LightTouch round's examples.
ROUND_SALT = 0x70C4C0DE

#: Salt (times the chunk) of the keys selecting an SVRG OL serial phase's later chunks.
CHUNK_SALT = 0xC4A11C


@dataclass(frozen=True)
class BatchGradient:
    """grad F^(v_k) (mean over ``examples`` rows), shape (d,), whether they were every row
    (``exact``: then it is grad L(v_k), and ``loss`` is L(v_k); 0 for a sampled batch), what
    computing them cost, and the serial phase's examples when the driver
    holds no rows (else None)."""

    mean: np.ndarray
    loss: float
    exact: bool
    examples: int
    bytes_moved: int
    seconds: float
    sample: Rows | None = None


@dataclass(frozen=True)
class BatchStats(Stats):
    """The batch phases' record (:mod:`worker.stats`): their communication rounds and bytes
    (with the set-up's once a round has run; summed with any later rounds'), the examples
    they read, their seconds and the workers."""

    communication_rounds: int = stat(summed=True)
    bytes_moved: int = stat(summed=True)
    batch_examples: int = stat()
    batch_s: float = stat()
    batch_workers: int = stat()


# -- the batch phase ---------------------------------------------------------------------------

class PartitionedBatch:
    """SVRG OL's data-parallel rounds over partitions an executor holds.

    Parameters
    ----------
    executor : LocalExecutor or DaskExecutor
    parts : list
        Handles of the partitions' :class:`~worker.kernels.svrg.Rows`, in row order.
    n, d : int
        Examples and width.
    counts : ndarray, shape (d,)
        Nonzeros per column, each counted with its example's weight of mean 1 (1 without
        weights), for the §8.1 inverse frequencies.
    seed : int
    sampled : bool
        The driver holds no rows: every round returns the serial phase's examples.
    setup_rounds, setup_bytes : int
        The rounds (census, weights) and bytes that making the partitions cost.
    entries : int, optional
        Feature nonzeros over every partition (default: ``counts``' sum).
    """

    def __init__(self, executor: Executor, parts: list[Any], n: int, d: int,
                 counts: np.ndarray, seed: int, *, sampled: bool,
                 setup_rounds: int = 0, setup_bytes: int = 0, entries: int | None = None):
        self.executor, self.parts, self.n, self.d = executor, parts, n, d
        self.seed, self.sampled = seed, sampled
        self.setup_rounds, self.setup_bytes = setup_rounds, setup_bytes
        self.value_rounds = self.value_bytes = 0
        self.gradient_rounds = self.gradient_bytes = self.gradient_examples = 0
        self.gradient_seconds = 0.0
        #: Feature nonzeros over every partition (unless given, each counted with its
        #: example's weight when the rows carry weights).
        self.entries = int(counts.sum()) if entries is None else entries
        #: I_j = n / sum of c_i over {i : x_ij != 0} (0 for columns no example uses), shape
        #: (d,) (§8.1; c the weights of mean 1, all 1 without weights).
        self.inverse_frequency = np.divide(n, counts, out=np.zeros(d), where=counts > 0)

    @property
    def workers(self) -> int:
        """Dask workers (0 in this process)."""
        return self.executor.workers

    def gradient(self, anchor: np.ndarray, round_index: int, batch_size: int,
                 serial_rows: int = 0) -> BatchGradient:
        """grad F^(anchor) over round ``round_index``'s batch of about ``batch_size`` rows,
        and, when ``sampled``, about ``serial_rows`` examples for the serial phase."""
        began = time.perf_counter()
        what = f"svrg_ol batch phase {round_index + 1}"
        run = self.executor
        key, fraction = batch_key(self.seed, round_index), min(1.0, batch_size / self.n)
        shared = run.share(anchor, what)
        root = tree_reduce([run.submit(partial_sum, part, shared, key, fraction)
                            for part in self.parts],
                           lambda a, b: run.submit(combine, a, b))
        handles = [root]
        if self.sampled:
            serial_key = batch_key(self.seed ^ SERIAL_SALT, round_index)
            forced = int(serial_key % np.uint64(self.n))
            handles += [run.submit(sample_of, part, serial_key,
                                   min(1.0, serial_rows / self.n), forced)
                        for part in self.parts]
        (total, count, losses), *samples = run.gather(handles, what)
        sample = concatenated(samples) if samples else None
        vector = 8 * self.d
        moved = vector * (self.workers + 2 * (len(self.parts) - 1) + 1) \
            + sum(rows_nbytes(s) for s in samples)
        seconds = time.perf_counter() - began
        return BatchGradient(total / max(count, 1), losses / max(count, 1), fraction >= 1.0,
                             count, self.count_round(moved, count, seconds), seconds, sample)

    def round_sample(self, round_index: int, rows: int) -> Rows:
        """About ``rows`` examples for round ``round_index`` of the LightTouch family's
        serial phase on partitions (:mod:`worker.algorithms.run.rounds`), selected
        by a hash of (seed, round, global row), so they do not depend on the workers; one
        communication round, counted with the batch phases'."""
        return self.sample(batch_key(self.seed ^ ROUND_SALT, round_index), rows,
                            f"round {round_index + 1}'s examples")

    def serial_sample(self, round_index: int, chunk: int, rows: int) -> Rows:
        """About ``rows`` examples for chunk ``chunk`` >= 1 of SVRG OL round
        ``round_index``'s serial phase (chunk 0's come with the round's batch phase), by a
        hash of (seed, round, chunk, global row); one communication round."""
        return self.sample(batch_key(self.seed ^ SERIAL_SALT ^ (chunk * CHUNK_SALT),
                                      round_index), rows,
                            f"svrg_ol round {round_index + 1}'s examples, part {chunk + 1}")

    def sample(self, key: np.uint64, rows: int, what: str) -> Rows:
        """About ``rows`` examples selected by ``key`` from every partition (``what``: the
        round, as a failure names it); one communication round."""
        began, run = time.perf_counter(), self.executor
        forced = int(key % np.uint64(self.n))
        samples = run.gather([run.submit(sample_of, part, key, min(1.0, rows / self.n), forced)
                              for part in self.parts], what)
        sample = concatenated(samples)
        self.count_round(sum(rows_nbytes(s) for s in samples), int(sample.labels.shape[0]),
                         time.perf_counter() - began)
        return sample

    def count_round(self, nbytes: int, examples: int, seconds: float) -> int:
        """Count one round of the rounds' kind (a batch phase, a sample of rows) that sent
        ``nbytes`` and ``examples`` rows in ``seconds``; the bytes it counts (none in this
        process)."""
        moved = self.executor.moved(nbytes)
        self.gradient_rounds += 1
        self.gradient_bytes += moved
        self.gradient_examples += examples
        self.gradient_seconds += seconds
        return moved

    def count_values(self, nbytes: int) -> None:
        """Count one map-reduce of values at points (objectives, rates, the polish's and
        the bound's reads) that sent ``nbytes``."""
        self.value_rounds += 1
        self.value_bytes += self.executor.moved(nbytes)

    def communication(self) -> tuple[int, int]:
        """(rounds, bytes) of the batch phases so far, with the set-up's once a round ran."""
        setup = self.gradient_rounds > 0
        return (self.gradient_rounds + (self.setup_rounds if setup else 0),
                self.gradient_bytes + (self.setup_bytes if setup else 0))

    def phase_stats(self) -> BatchStats:
        """The batch phases' record so far (while the executor is open: it counts workers)."""
        rounds, moved = self.communication()
        return BatchStats(rounds, moved, self.gradient_examples, self.gradient_seconds,
                          self.workers)

    def serial_arrays(self, arrays: ProblemArrays, sample: Rows | None) -> ProblemArrays:
        """The kernel arrays a serial phase (or its chunk) samples: its ``sample`` of
        examples when the driver holds no rows, else ``arrays`` as they are."""
        return arrays if sample is None else with_rows(arrays, sample)

    def values(self, points: np.ndarray, arrays: ProblemArrays) -> np.ndarray:
        """f(w_k) for points (K, d), shape (K,), in one round: the mean loss over every
        partition, plus the terms :func:`~worker.kernels.objective.objective_value` adds
        to it on ``arrays`` without their rows (l2, ...)."""
        points = np.ascontiguousarray(np.atleast_2d(points), dtype=np.float64)
        run, what = self.executor, "svrg_ol objective values"
        shared = run.share(points, what)
        root = tree_reduce([run.submit(partial_losses, part, shared) for part in self.parts],
                           lambda a, b: run.submit(add, a, b))
        (sums,) = run.gather([root], what)
        self.count_values(points.nbytes * self.workers
                          + 8 * points.shape[0] * (2 * len(self.parts) - 1))
        rowless = arrays._replace(x_indptr=np.zeros(1, dtype=np.int64),
                                  x_indices=np.zeros(0, dtype=arrays.x_indices.dtype),
                                  x_data=np.zeros(0),
                                  labels=np.zeros(0), x_width=0, x_entries=0)
        return np.array([total / self.n + objective_value(rowless, w)
                         for total, w in zip(sums, points, strict=True)])


def with_rows(arrays: ProblemArrays, rows: Rows) -> ProblemArrays:
    """The kernel arrays with ``rows`` as their examples (ragged CSR; their column indices in
    the dtype of ``arrays``', so the kernels keep the signature the warm-up compiled).

    Rows of weights other than all 1 are drawn with probability proportional to their
    weight, as the rows of the whole data set are in one process, so drawing from rows
    selected uniformly keeps the serial phase's estimate unbiased; rows whose weights are
    all 0 (possible only when nearly every weight is 0) are drawn uniformly."""
    weighted = np.any(rows.weights != 1.0) and np.any(rows.weights > 0)
    return arrays._replace(x_indptr=rows.indptr,
                           x_indices=rows.indices.astype(arrays.x_indices.dtype),
                           x_data=rows.data, labels=rows.labels, x_width=0,
                           x_entries=int(rows.indptr[-1]),
                           **draw_arrays(rows.weights if weighted else None))


class CompiledBatch(PartitionedBatch):
    """Partitions of the driver's compiled rows: views in this process, shipped inside their
    tasks to Dask. The serial phase samples the driver's rows."""

    def __init__(self, executor: Executor, problem: CompiledProblem, options: SvrgOptions,
                 seed: int):
        rows = [rows_of(problem.objective, start, stop)
                for start, stop in partition_bounds(problem.n, options.partition_rows)]
        shipped = isinstance(executor, DaskExecutor)
        super().__init__(executor, [executor.submit(rows_in_task, part) for part in rows],
                         problem.n, problem.d,
                         _weighted_counts(problem),
                         seed,
                         sampled=False,
                         setup_bytes=sum(rows_nbytes(p) for p in rows) if shipped else 0)


def _weighted_counts(problem: CompiledProblem) -> np.ndarray:
    """sum of c_i over the examples with x_ij != 0, per column j, shape (d,)."""
    features = problem.objective.features
    rows = np.repeat(problem.objective.example_weights(), np.diff(features.indptr))
    return np.bincount(features.indices, weights=rows, minlength=problem.d)


class InProcessBatch(CompiledBatch):
    """The batch phase in this process over views of the compiled problem's rows."""

    def __init__(self, problem: CompiledProblem, options: SvrgOptions, seed: int):
        super().__init__(LocalExecutor(), problem, options, seed)


def partitioned_batch(executor: Executor, plan: PartitionPlan, seed: int,
                      settings: DataSettings) -> PartitionedBatch:
    """Read the plan's partitions where the executor runs, with the census round (and, for
    weighted examples, the weights' round), under the job's data ``settings``."""
    what, weighted = "svrg_ol reading the data (census)", plan.weighted
    plan, inline = held_weights(plan)
    chunks = [executor.submit(read_chunk, plan, k, settings) for k in range(len(plan.pieces))]
    censuses = [executor.submit(census_of, chunk, plan.loss) for chunk in chunks]
    counted = tree_reduce([executor.submit(column_counts, chunk) for chunk in chunks],
                          lambda a, b: executor.submit(add_counts, a, b))
    *censuses, raw_counts = executor.gather(censuses + [counted], what)
    settled = settle(plan, censuses)
    counts = shifted_counts(raw_counts, settled)
    entries, weights, weight_bytes = int(counts.sum()), [None] * len(chunks), 0
    if weighted:
        spans = [(offset, census.rows) for offset, census in zip(settled.offsets, censuses,
                                                                   strict=True)]
        columns, weights, weight_bytes = weights_round(executor, plan, inline, chunks, spans,
                                                       settings, tally)
        counts = shifted_counts(columns, settled)
    parts = [executor.submit(finish, plan, chunk, offset, settled.base, settings, part_weights)
             for chunk, offset, part_weights in zip(chunks, settled.offsets, weights,
                                                    strict=True)]
    messages = [pickle.dumps(census) for census in censuses] + [pickle.dumps(plan)] * 2
    setup = executor.moved(raw_counts.nbytes * max(1, len(chunks) - 1)
                           + len(chunks) * max(len(m) for m in messages) * 2) + weight_bytes
    return PartitionedBatch(executor, parts, settled.n, settled.width, counts, seed,
                            sampled=True, setup_rounds=1 + weighted, setup_bytes=setup,
                            entries=entries)


# -- opening a backend ---------------------------------------------------------------------

def use_cluster(problem: CompiledProblem, options: SvrgOptions) -> bool:
    """Whether a compiled problem's batch phase goes to Dask (module docstring)."""
    if options.workers is not None:
        return options.workers > 0
    return problem.objective.features.nnz >= SMALL_DATA_NONZEROS


@contextmanager
def open_batch_phase(problem: CompiledProblem, options: SvrgOptions, seed: int,
                     source: PartitionedBatch | None = None) -> Iterator[PartitionedBatch]:
    """The batch backend for one solve: the partitioned data already open (``source``),
    else partitions of the compiled problem."""
    if source is not None:
        yield source
        return
    with executor_for(options.workers if use_cluster(problem, options) else 0,
                      options.cluster) as executor:
        yield CompiledBatch(executor, problem, options, seed)


@contextmanager
def open_partitioned(plan: PartitionPlan, options: SvrgOptions, seed: int,
                     settings: DataSettings) -> Iterator[PartitionedBatch]:
    """The plan's partitions read (under the job's data ``settings``) and censused where the
    rounds run (module docstring)."""
    workers = options.workers
    if workers is None and plan.size < SMALL_DATA_BYTES:
        workers = 0
    with executor_for(workers, options.cluster) as executor:
        yield partitioned_batch(executor, plan, seed, settings)
