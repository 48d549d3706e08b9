"""svrg_ol against a Dask cluster started the way docker-compose's ``dask`` profile starts
it: ``dask scheduler`` and ``dask worker`` processes, found through
``LIGHTTOUCH_DASK_SCHEDULER``."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import distributed
import pytest

from tests.specs import random_spec
from worker import solve

#: The ``dask`` console script installed next to this interpreter.
DASK = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler_address() -> Iterator[str]:
    """A scheduler and two single-threaded worker processes, as in docker-compose.yml."""
    assert DASK is not None, "the dask command-line tool is not installed: pip install -e ."
    address = f"tcp://127.0.0.1:{free_port()}"
    port = address.rsplit(":", 1)[1]
    processes = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", port,
                                   "--dashboard-address", ":0"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    processes += [subprocess.Popen([DASK, "worker", address, "--nworkers", "1",
                                    "--nthreads", "1", "--no-dashboard"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                  for _ in range(2)]
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)


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
