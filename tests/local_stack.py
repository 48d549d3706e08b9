"""A local LightTouch stack of real processes: redis-server, the uvicorn API, queue workers.

The tests' harness, kept out of the installed package (its API keys are fixed test keys):
used by the service tests, by ``bench/service_load.py`` and to try the service on one machine.
Redis runs without persistence on a free port (never the machine's 6379); each
:class:`Stack` uses its own database number, so stacks sharing one server do not see each
other's queue.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from worker.queue.warm_up import warm_up
from worker.queue.workers import live_workers
from worker.settings import child_environment

REPO = Path(__file__).resolve().parents[1]
#: A small job (4-dimensional quadratic, one chain): smoke tests and load runs. FullTouch
#: (``auto`` would solve it exactly in milliseconds), so that a job runs for its iterations,
#: reports progress and can be cancelled.
SMALL_SPEC = {
    "spec_version": 1, "dimension": 4, "bounds": {"lower": -1, "upper": 1},
    "objective": {"type": "quadratic", "Q": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0],
                                             [0, 0, 0, 1]], "c": [1, -1, 0.5, 0]},
    "constraints": [{"type": "ordering", "chain": [0, 1, 2, 3]}],
    "solver": {"algorithm": "fulltouch", "iterations": 20000, "seed": 1},
}


def small_spec(iterations: int = 20000, time_limit_s: float = 600.0, seed: int = 1) -> dict:
    """:data:`SMALL_SPEC` with another iteration count, time limit or seed."""
    copied = copy.deepcopy(SMALL_SPEC)
    copied["solver"].update(iterations=iterations, time_limit_s=time_limit_s, seed=seed)
    return copied


#: Seconds a new worker may take to load its kernels and register.
WORKER_START_S = 300
#: The stacks' tenants and their API keys; "fuzz" is the property-based run's own: the jobs it
#: leaves queued on the worker-less stack fill its tenant's cap, which no other test then meets,
#: whichever order the files run in.
KEYS = {"alpha": "key-alpha-0001", "beta": "key-beta-0002", "gamma": "key-gamma-0003",
        "fuzz": "key-fuzz-0004"}


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition: Callable[[], object], timeout_s: float, what: str,
             interval_s: float = 0.05) -> object:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


def children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:   # the process ended while we looked
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@functools.cache
def _compile_kernels() -> None:
    """Compile every algorithm's kernels into numba's on-disk cache (once per process)."""
    warm_up()


class RedisServer:
    """A throw-away ``redis-server`` on a free port: no RDB and no AOF, or, ``persistent``,
    the production setting (AOF, ``appendfsync everysec``) so that it can be restarted."""

    def __init__(self, persistent: bool = False) -> None:
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="lighttouch-redis-")
        self.persistent = persistent
        self.process = self._start()

    def _start(self) -> subprocess.Popen:
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if self.persistent \
            else ["--appendonly", "no"]
        process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             *persistence, "--dir", self.directory],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = Redis(port=self.port)
        wait_for(lambda: _pings(client), 10, "redis-server")
        client.close()
        return process

    def restart(self, how: str) -> None:
        """Stop the server (``"shutdown"``: the SHUTDOWN command; ``"kill"``: SIGKILL) and
        start it again on the same port and directory."""
        if how == "shutdown":
            with Redis(port=self.port) as client, contextlib.suppress(RedisConnectionError):
                client.shutdown()
        else:
            self.process.kill()
        self.process.wait(10)
        self.process = self._start()

    def url(self, db: int) -> str:
        """The URL of database ``db``."""
        return f"redis://127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        """Stop the server and delete its directory."""
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.directory, ignore_errors=True)


def _pings(client: Redis) -> bool:
    try:
        return bool(client.ping())
    except RedisConnectionError:
        return False


@dataclass
class Stack:
    """An API process and worker processes on one Redis database; their output goes to ``logs``.

    ``settings`` are extra environment variables (``LIGHTTOUCH_*``) of every process.
    """

    redis_url: str
    logs: Path
    settings: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    api: subprocess.Popen | None = None
    workers: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The API's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The environment of every process of this stack."""
        api_keys = ",".join(f"{tenant}:{key}" for tenant, key in KEYS.items())
        return child_environment({
            "LIGHTTOUCH_REDIS_URL": self.redis_url, "LIGHTTOUCH_API_KEYS": api_keys,
            "LIGHTTOUCH_HEARTBEAT_S": "1", "NUMBA_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
            **self.settings})

    def redis(self) -> Redis:
        """A client of the stack's database."""
        return Redis.from_url(self.redis_url)

    def client(self, tenant: str | None = "alpha", **kwargs) -> httpx.Client:
        """An HTTP client of the API, authenticated as ``tenant`` (None: no key)."""
        headers = {"Authorization": f"Bearer {KEYS[tenant]}"} if tenant else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)

    def lighttouch(self, *args: str, log: str) -> subprocess.Popen:
        """Start ``python -m service.cli ARGS`` with this stack's environment."""
        self.logs.mkdir(parents=True, exist_ok=True)
        with (self.logs / log).open("ab") as output:
            return subprocess.Popen([sys.executable, "-m", "service.cli", *args], cwd=REPO,
                                    env=self.env, stdout=output, stderr=subprocess.STDOUT)

    def start_api(self) -> None:
        """Start the API and wait until it answers."""
        self.api = self.lighttouch("serve", "--port", str(self.port), log="api.log")
        wait_for(self._api_up, 30, f"the API (log {self.logs / 'api.log'})")

    def _api_up(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def stop_api(self, sig: int = signal.SIGTERM) -> None:
        """Stop the API process with ``sig``."""
        if self.api is not None:
            self.api.send_signal(sig)
            self.api.wait(15)
            self.api = None

    def start_worker(self, *args: str) -> subprocess.Popen:
        """Start a worker and wait until its heartbeat is visible.

        A worker compiles (or loads from numba's on-disk cache) every kernel before it
        registers. The kernels are compiled here first, once per test process, so every
        worker only loads them; the wait still allows for a slow, busy machine, and ends
        at once, with the worker's log, if the worker exits instead.
        """
        _compile_kernels()
        log = self.logs / f"worker-{len(self.workers)}.log"
        with self.redis() as redis:
            alive = live_workers(redis, 1)
            process = self.lighttouch("worker", *args, log=log.name)
            self.workers.append(process)

            def registered() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"the worker exited with {process.returncode}: "
                                       f"{log.read_text()[-4000:]}")
                return live_workers(redis, 1) > alive

            wait_for(registered, WORKER_START_S, f"a worker heartbeat (log {log})")
        return process

    def stop_workers(self) -> None:
        """Stop every worker (warm shutdown), then forget them."""
        for process in self.workers:
            if process.poll() is None:
                process.terminate()
        for process in self.workers:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.workers.clear()

    def close(self) -> None:
        """Stop every process; flush the stack's database."""
        self.stop_workers()
        self.stop_api()
        with self.redis() as redis:
            redis.flushdb()
