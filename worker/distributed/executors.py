"""Where the tasks of the data-parallel rounds run: in this process (:class:`LocalExecutor`)
or on a Dask cluster (:class:`DaskExecutor`), behind one interface (submit a task, share a
value with every task, gather results, count bytes moved); :func:`executor_for` opens the
one a job's placement asks for."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import Any, TypeVar

from worker.errors import SolverError
from worker.settings import DaskSettings

T = TypeVar("T")


class LocalExecutor:
    """Runs every task at once in this process; handles are the values themselves."""

    workers = 0

    def submit(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)``."""
        return function(*args)

    def share(self, value: T, what: str) -> T:
        """The value, as every task's argument."""
        return value

    def gather(self, handles: list[Any], what: str) -> list[Any]:
        """The values."""
        return list(handles)

    def moved(self, nbytes: int) -> int:
        """Bytes that crossing a process boundary would cost: none here."""
        return 0


class DaskExecutor:
    """Runs tasks on a Dask cluster; handles are futures, failures become SolverErrors: workers
    that died repeatedly, a round past ``LIGHTTOUCH_DASK_TIMEOUT_S``, a scheduler that went
    away (a worker that dies once is replaced by its nanny, and Dask recomputes what it
    held)."""

    def __init__(self, client: Any, timeout_s: float):
        self.client, self.timeout_s = client, timeout_s
        self.workers = len(client.scheduler_info(n_workers=-1)["workers"])
        self.address = client.scheduler.address

    def submit(self, function: Callable[..., Any], *args: Any) -> Any:
        """A future of ``function(*args)``; never cached, so a lost result is recomputed."""
        return self.client.submit(function, *args, pure=False)

    def share(self, value: Any, what: str) -> Any:
        """A future holding the value, as a task (not scattered data): the scheduler keeps
        the task, so when the worker holding the value dies Dask recomputes it instead of
        failing every task that needs it."""
        return self.client.submit(_value, value, pure=False)

    def gather(self, handles: list[Any], what: str) -> list[Any]:
        """The futures' results, within ``LIGHTTOUCH_DASK_TIMEOUT_S``."""
        from distributed import wait

        with self._failures(what):
            wait(handles, timeout=self.timeout_s)
            return self.client.gather(handles)

    def moved(self, nbytes: int) -> int:
        """Bytes sent between processes."""
        return nbytes

    @contextmanager
    def _failures(self, what: str) -> Iterator[None]:
        from distributed import KilledWorker

        try:
            yield
        except KilledWorker as error:
            raise SolverError(f"{what}: Dask workers died repeatedly ({error}); see the "
                              "worker logs, e.g. for running out of memory") from None
        except (CancelledError, TimeoutError) as error:
            if "scheduler-connection-lost" in str(error) or self.client.status != "running":
                raise SolverError(f"{what}: the Dask scheduler at {self.address} went away "
                                  "(the client lost its connection to it); check that the "
                                  "scheduler runs (LIGHTTOUCH_DASK_SCHEDULER) and submit the "
                                  "job again") from None
            if isinstance(error, CancelledError):
                raise SolverError(f"{what}: the Dask cluster cancelled its tasks "
                                  f"({str(error).splitlines()[0]})") from None
            raise SolverError(f"{what} did not finish in {self.timeout_s:g} s "
                              "(LIGHTTOUCH_DASK_TIMEOUT_S); check that the Dask cluster has "
                              "live workers") from None


Executor = LocalExecutor | DaskExecutor


def _value(value: Any) -> Any:
    """The task that holds a shared value."""
    return value


@contextmanager
def executor_for(workers: int | None, settings: DaskSettings | None) -> Iterator[Executor]:
    """In this process for ``workers`` 0, else Dask as ``settings`` say (the scheduler, or a
    LocalCluster it starts and closes)."""
    if workers == 0:
        yield LocalExecutor()
        return
    if settings is None:
        raise SolverError("svrg_ol's batch phase on Dask needs the cluster settings "
                          "(SvrgOptions.cluster, read once where the process starts)")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SolverError("svrg_ol with workers > 0 needs Dask: pip install "
                          "'dask[distributed]' (or set solver.svrg.workers to 0)") from None
    if settings.dask_scheduler:
        with Client(settings.dask_scheduler, timeout=settings.dask_timeout_s) as client:
            yield DaskExecutor(client, settings.dask_timeout_s)
        return
    count = workers or os.cpu_count() or 1
    with LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        yield DaskExecutor(client, settings.dask_timeout_s)
