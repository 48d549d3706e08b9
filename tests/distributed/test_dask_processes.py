"""svrg_ol against a Dask cluster started the way docker-compose's ``dask`` profile starts
it: ``dask scheduler`` and ``dask worker`` processes, found through
``LIGHTTOUCH_DASK_SCHEDULER``; and its faults, by killing those processes by pid: a worker
killed mid-round is replaced and the job gives the same answer (pointwise files, and a
calibrated model's raw pairs), a scheduler that goes away fails the job saying so."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import distributed
import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from tests.distributed.test_raw_pairs import raw_spec
from tests.specs import random_spec
from worker import solve
from worker.errors import SolverError

#: The ``dask`` console script installed next to this interpreter.
DASK = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def dask_processes(workers: int) -> Iterator[tuple[str, subprocess.Popen]]:
    """A ``dask scheduler`` and ``workers`` single-threaded ``dask worker`` processes (each
    under its nanny), as in docker-compose.yml: the address and the scheduler's process."""
    assert DASK is not None, "the dask command-line tool is not installed: pip install -e ."
    address = f"tcp://127.0.0.1:{free_port()}"
    port = address.rsplit(":", 1)[1]
    processes = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", port,
                                   "--dashboard-address", ":0"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    processes += [subprocess.Popen([DASK, "worker", address, "--nworkers", "1",
                                    "--nthreads", "1", "--no-dashboard"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                  for _ in range(workers)]
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address, processes[0]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)


@pytest.fixture(scope="module")
def scheduler_address() -> Iterator[str]:
    """A scheduler and two worker processes."""
    with dask_processes(2) as (address, _):
        yield address


def test_svrg_ol_on_an_external_cluster_gives_the_in_process_bits(scheduler_address,
                                                                  monkeypatch):
    spec = random_spec("logistic", "mixed", 3, n=150, iterations=10_000)
    spec["solver"].update(algorithm="svrg_ol", svrg={"workers": 2, "partition_rows": 41})
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", scheduler_address)
    on_cluster = solve(spec)
    spec["solver"]["svrg"]["workers"] = 0
    in_process = solve(spec)
    assert on_cluster.stats["batch_workers"] == 2
    assert on_cluster.projected.solution == in_process.projected.solution
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]


@pytest.fixture
def partitioned(tmp_path, monkeypatch):
    """A spec over 20,000 svmlight examples in about 35 partitions read by the workers:
    ``auto`` over the per-job budget, so it runs svrg_ol with its data on the cluster (an
    ordering constraint keeps L-BFGS-B, which takes only the box, out)."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(20_000, 8))
    dump_svmlight_file(x, np.sign(x @ rng.normal(size=8) + 0.3 * rng.normal(size=20_000)),
                       str(tmp_path / "train.svm"))
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "100000")
    return {"objective": {"type": "empirical_risk", "loss": "logistic", "data": {
                "features": {"uri": (tmp_path / "train.svm").as_uri()}}},
            "bounds": {"lower": -1, "upper": 1},
            "constraints": [{"type": "ordering", "chain": [0, 1]}],
            "solver": {"iterations": 20_000, "seed": 6}}


def kill_mid_round(address: str, killed: list[int]) -> None:
    """Kill (SIGKILL, by pid) the first worker seen holding a batch round's task."""
    with distributed.Client(address, timeout=60) as watcher:
        pids = watcher.run(os.getpid)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            for worker, keys in watcher.processing().items():
                if any(str(key).startswith("partial_sum") for key in keys):
                    os.kill(pids[worker], signal.SIGKILL)
                    killed.append(pids[worker])
                    return
            time.sleep(0.005)


def test_a_worker_killed_mid_round_is_replaced_and_the_job_gives_the_same_answer(
        scheduler_address, partitioned, monkeypatch):
    in_process = solve(dict(partitioned, solver={**partitioned["solver"],
                                                 "algorithm": "svrg_ol", "svrg": {"workers": 0}}))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", scheduler_address)
    killed: list[int] = []
    killer = threading.Thread(target=kill_mid_round, args=(scheduler_address, killed))
    killer.start()
    on_cluster = solve(partitioned, max_job_bytes=4_000_000)
    killer.join(60)
    assert len(killed) == 1, "no batch round was seen running"
    assert on_cluster.stats["placement"] == "cluster" and on_cluster.algorithm == "svrg_ol"
    assert on_cluster.projected.solution == in_process.projected.solution
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]
    with distributed.Client(scheduler_address, timeout=60) as client:
        client.wait_for_workers(2, timeout=120)       # the nanny started a new worker
        assert killed[0] not in client.run(os.getpid).values()


def test_a_worker_killed_while_raw_pairs_are_in_rounds_gives_the_same_answer(
        scheduler_address, tmp_path, monkeypatch):
    """A calibrated lattice on raw parquet pairs: the killed worker's partitions (the feature
    rows it made of its raw rows) are read again by the one that replaces it."""
    spec = raw_spec(tmp_path, n=12_000, workers=2, iterations=30_000)
    spec["solver"]["algorithm"] = "svrg_ol"
    in_process = solve(spec | {"solver": spec["solver"] | {"workers": 0}}, roots=[tmp_path])
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", scheduler_address)
    killed: list[int] = []
    killer = threading.Thread(target=kill_mid_round, args=(scheduler_address, killed))
    killer.start()
    on_cluster = solve(spec, roots=[tmp_path])
    killer.join(60)
    assert len(killed) == 1, "no batch round was seen running"
    assert on_cluster.stats["placement"] == "cluster" and on_cluster.model == in_process.model
    assert on_cluster.projected.solution == in_process.projected.solution
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]


def test_a_scheduler_that_goes_away_fails_the_job_saying_so(partitioned, monkeypatch):
    with dask_processes(1) as (address, scheduler):
        monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", address)
        monkeypatch.setenv("LIGHTTOUCH_DASK_TIMEOUT_S", "30")   # how long to wait for it

        def kill_the_scheduler(progress) -> None:
            if scheduler.poll() is None:
                os.kill(scheduler.pid, signal.SIGKILL)

        began = time.perf_counter()
        with pytest.raises(SolverError, match=f"scheduler at {address} went away"):
            solve(partitioned, kill_the_scheduler, max_job_bytes=4_000_000)
        assert time.perf_counter() - began < 400
