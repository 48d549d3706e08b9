"""The batch phase of SVRG OL (Cutkosky & Busa-Fekete, Algorithm 1 lines 4-6, §7-§8.2) as a
map-reduce of gradient sums over row partitions, in this process or on a Dask cluster.

Both backends run the same plan, so the same seed gives the same bits:

* rows are cut into partitions of ``partition_rows`` consecutive examples (not by worker
  count, so the answer does not depend on the cluster's size);
* every partition sums grad l_i(v_k) over its selected rows
  (:func:`worker.kernels.svrg.gradient_sum`; which rows is a hash of seed, round and row);
* the partial sums are combined by a fixed pairwise tree (:func:`tree_reduce`): level by
  level, (0, 1), (2, 3), ... as in the paper's Spark tree aggregation (§8.2).

On Dask the partitions are futures that live on the workers. When the objective's data are
references (``file://``, ``http(s)://``, ``s3://``), each worker reads its partition through
the data layer (:func:`load_rows`, same URI policy and parsed cache); inline data are shipped
inside the partition's task. Partitions are tasks, never scattered data, so a worker that
dies is recovered by Dask recomputing what it held (up to ``allowed-failures`` times), and
a batch that cannot finish in ``LIGHTTOUCH_DASK_TIMEOUT_S`` fails the job with a
:class:`~worker.errors.SolverError` instead of waiting forever.

Where the batch runs (``solver.svrg.workers``): 0 → in this process; a number → Dask with
that many workers on a ``LocalCluster``, or the cluster at ``LIGHTTOUCH_DASK_SCHEDULER``;
``auto`` → in this process for data below :data:`SMALL_DATA_NONZEROS`, otherwise that
cluster or a ``LocalCluster`` with one single-threaded worker per core.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from worker.algorithms.svrg_schedule import SvrgOptions
from worker.compile import compile_problem
from worker.errors import SolverError
from worker.kernels.svrg import Rows, batch_key, gradient_sum
from worker.problem import CompiledProblem, Objective
from worker.refs import DataRef
from worker.spec import Bounds, EmpiricalRisk, Solver, Spec, parse_spec

#: ``workers: auto`` keeps the batch phase in-process below this many feature nonzeros:
#: a full gradient over 612k rows takes 42 ms serially and 140-225 ms on a LocalCluster
#: (DESIGN §9), so a cluster pays off only for data near one machine's memory.
SMALL_DATA_NONZEROS = 2**28

T = TypeVar("T")


class DaskSettings(BaseSettings):
    """``LIGHTTOUCH_DASK_SCHEDULER`` (address of an existing scheduler, e.g.
    ``tcp://dask-scheduler:8786``; empty: a LocalCluster) and ``LIGHTTOUCH_DASK_TIMEOUT_S``
    (the longest one batch phase, including connecting, may take; default 600)."""

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore")

    dask_scheduler: str | None = None
    dask_timeout_s: float = Field(600.0, gt=0, allow_inf_nan=False)


@dataclass(frozen=True)
class PartitionSource:
    """Where workers read the objective's rows: an objective-only spec (JSON) and data roots."""

    spec_json: str
    roots: tuple[str, ...]


@dataclass(frozen=True)
class BatchGradient:
    """grad F^(v_k) (mean over ``examples`` rows), shape (d,), and what computing it cost."""

    mean: np.ndarray
    examples: int
    bytes_moved: int
    seconds: float


def partition_source(spec: Spec, roots: Sequence[Path]) -> PartitionSource | None:
    """For svrg_ol, the source Dask workers can read themselves when every objective value
    is a reference outside the spec (not inline, not a ``data:`` URI); else None."""
    objective = spec.objective
    if spec.solver.algorithm != "svrg_ol" or not isinstance(objective, EmpiricalRisk):
        return None
    data = objective.data
    values = [v for v in (data.features, data.labels, data.positive, data.negative)
              if v is not None]
    if not all(isinstance(v, DataRef) and not v.uri.startswith("data:") for v in values):
        return None
    alone = spec.model_copy(update={"constraints": [], "bounds": Bounds(), "solver": Solver()})
    return PartitionSource(alone.model_dump_json(exclude_unset=True),
                           tuple(str(root) for root in roots))


def partition_bounds(n: int, partition_rows: int) -> list[tuple[int, int]]:
    """Row ranges [start, stop) of at most ``partition_rows`` rows covering 0..n-1."""
    return [(start, min(start + partition_rows, n)) for start in range(0, n, partition_rows)]


def rows_of(objective: Objective, start: int, stop: int) -> Rows:
    """Rows start..stop-1 of the objective's examples (views of its arrays, rebased indptr)."""
    features = objective.features
    first, last = int(features.indptr[start]), int(features.indptr[stop])
    return Rows(kind=np.int64(objective.kind),
                indptr=(features.indptr[start:stop + 1] - first).astype(np.int64),
                indices=features.indices[first:last].astype(np.int64, copy=False),
                data=np.ascontiguousarray(features.data[first:last], dtype=np.float64),
                labels=np.ascontiguousarray(objective.labels[start:stop], dtype=np.float64),
                first_row=np.int64(start))


def load_rows(source: PartitionSource, start: int, stop: int) -> Rows:
    """On a worker: read the objective through the data layer and keep rows start..stop-1."""
    problem = compile_problem(parse_spec(json.loads(source.spec_json)),
                              [Path(root) for root in source.roots])
    part = rows_of(problem.objective, start, stop)
    return part._replace(indices=part.indices.copy(), data=part.data.copy())


def partial_sum(rows: Rows, anchor: np.ndarray, key: np.uint64,
                fraction: float) -> tuple[np.ndarray, int]:
    """(sum of the selected rows' loss gradients at the anchor, shape (d,), their count)."""
    total = np.zeros(anchor.shape[0])
    count = gradient_sum(rows, anchor, key, fraction, total)
    return total, int(count)


def combine(left: tuple[np.ndarray, int], right: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    """One node of the reduction tree: add two partial sums."""
    return left[0] + right[0], left[1] + right[1]


def tree_reduce(items: list[T], pair: Callable[[T, T], T]) -> T:
    """Reduce level by level, pairing (0, 1), (2, 3), ...; an odd last item moves up as is."""
    level = list(items)
    while len(level) > 1:
        level = [pair(level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                 for k in range(0, len(level), 2)]
    return level[0]


def _fraction(batch_size: int, n: int) -> float:
    return min(1.0, batch_size / n)


def _mean(total: np.ndarray, count: int) -> np.ndarray:
    return total / count if count else total


class InProcessBatch:
    """The batch phase in this process, over views of the compiled problem's rows."""

    workers = 0
    setup_bytes = 0

    def __init__(self, problem: CompiledProblem, options: SvrgOptions, seed: int):
        self.n, self.seed = problem.n, seed
        self.parts = [rows_of(problem.objective, start, stop)
                      for start, stop in partition_bounds(problem.n, options.partition_rows)]

    def gradient(self, anchor: np.ndarray, round_index: int, batch_size: int) -> BatchGradient:
        """grad F^(anchor) over round ``round_index``'s batch of about ``batch_size`` rows."""
        began = time.perf_counter()
        key, fraction = batch_key(self.seed, round_index), _fraction(batch_size, self.n)
        total, count = tree_reduce([partial_sum(part, anchor, key, fraction)
                                    for part in self.parts], combine)
        return BatchGradient(_mean(total, count), count, 0, time.perf_counter() - began)


class DaskBatch:
    """The batch phase on a Dask cluster; partitions stay on the workers between rounds."""

    def __init__(self, client: Any, problem: CompiledProblem, options: SvrgOptions, seed: int,
                 timeout_s: float):
        self.client, self.n, self.seed, self.timeout_s = client, problem.n, seed, timeout_s
        self.d = problem.d
        self.workers = len(client.scheduler_info(n_workers=-1)["workers"])
        bounds = partition_bounds(problem.n, options.partition_rows)
        if options.source is not None:
            self.parts = [client.submit(load_rows, options.source, start, stop, pure=False)
                          for start, stop in bounds]
            self.setup_bytes = len(options.source.spec_json) * len(bounds)
        else:
            rows = [rows_of(problem.objective, start, stop) for start, stop in bounds]
            self.parts = [client.submit(_copy_rows, part, pure=False) for part in rows]
            self.setup_bytes = sum(_nbytes(part) for part in rows)

    def gradient(self, anchor: np.ndarray, round_index: int, batch_size: int) -> BatchGradient:
        """As :meth:`InProcessBatch.gradient`, as tasks on the cluster; one round of messages."""
        from distributed import KilledWorker

        began = time.perf_counter()
        key, fraction = batch_key(self.seed, round_index), _fraction(batch_size, self.n)
        try:
            shared = self.client.scatter(anchor, broadcast=True, hash=False,
                                         timeout=self.timeout_s)
            partials = [self.client.submit(partial_sum, part, shared, key, fraction, pure=False)
                        for part in self.parts]
            root = tree_reduce(partials, lambda a, b: self.client.submit(combine, a, b,
                                                                         pure=False))
            total, count = root.result(timeout=self.timeout_s)
        except KilledWorker as error:
            raise SolverError(f"svrg_ol batch phase {round_index + 1}: Dask workers died "
                              f"repeatedly ({error}); see the worker logs, e.g. for running "
                              "out of memory") from None
        except TimeoutError:
            raise SolverError(f"svrg_ol batch phase {round_index + 1} did not finish in "
                              f"{self.timeout_s:g} s (LIGHTTOUCH_DASK_TIMEOUT_S); check that "
                              "the Dask cluster has live workers") from None
        vector_bytes = 8 * self.d
        moved = vector_bytes * (self.workers + 2 * (len(self.parts) - 1) + 1)
        return BatchGradient(_mean(total, count), count, moved, time.perf_counter() - began)


def _copy_rows(rows: Rows) -> Rows:
    """A partition shipped inside its task (recomputable after a worker dies)."""
    return rows


def _nbytes(rows: Rows) -> int:
    return int(rows.indptr.nbytes + rows.indices.nbytes + rows.data.nbytes + rows.labels.nbytes)


def use_cluster(problem: CompiledProblem, options: SvrgOptions) -> bool:
    """Whether the batch phase goes to Dask (module docstring)."""
    if options.workers is not None:
        return options.workers > 0
    return problem.objective.features.nnz >= SMALL_DATA_NONZEROS


@contextmanager
def open_batch_phase(problem: CompiledProblem, options: SvrgOptions,
                     seed: int) -> Iterator[InProcessBatch | DaskBatch]:
    """The batch backend for one solve; a LocalCluster it starts is closed on exit."""
    if not use_cluster(problem, options):
        yield InProcessBatch(problem, options, seed)
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SolverError("svrg_ol with workers > 0 needs Dask: pip install "
                          "'dask[distributed]' (or set solver.svrg.workers to 0)") from None
    settings = DaskSettings()
    if settings.dask_scheduler:
        with Client(settings.dask_scheduler, timeout=settings.dask_timeout_s) as client:
            yield DaskBatch(client, problem, options, seed, settings.dask_timeout_s)
        return
    workers = options.workers or os.cpu_count() or 1
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        yield DaskBatch(client, problem, options, seed, settings.dask_timeout_s)
