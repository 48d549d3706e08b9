"""Fixtures of the container tests: the image built with podman, the compose stack started
with podman-compose (three workers, the Dask profile), and a client of it.

Without podman (and the tools it needs) the tests skip locally and fail in CI
(``tests/conftest.py``); ``.ci/run`` installs them. Timings of the build and of the first
jobs go to ``tests/artifacts/containers.json``.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pytest
import scipy.sparse as sp

from tests.containers import podman
from tests.local_stack import REPO, free_port, wait_for

ARTIFACTS = REPO / "tests" / "artifacts"
PROJECT = "lighttouch-ci"
API_KEY = "ci-key-0123456789abcdef"
WORKERS = 3
HEARTBEAT_S = 2
INSTALL_HINT = ("install them as .ci/run does: apt-get install podman runc uidmap slirp4netns "
                "fuse-overlayfs debootstrap; pip install podman-compose")


@pytest.fixture(scope="session")
def podman_env() -> dict[str, str]:
    """The environment podman runs in (its configuration under the cache directory)."""
    missing = podman.missing_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not found: {INSTALL_HINT}")
    return podman.environment()


@pytest.fixture(scope="session")
def timings() -> Iterator[dict[str, float]]:
    """Seconds that steps took, written to ``tests/artifacts/containers.json`` at the end."""
    measured: dict[str, float] = {}
    yield measured
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "containers.json").write_text(json.dumps(measured, indent=1) + "\n")


@pytest.fixture(scope="session")
def image(podman_env: dict[str, str], timings: dict[str, float]) -> str:
    """``lighttouch:latest`` built from the repository (base images pulled, or stand-ins)."""
    start = time.perf_counter()
    podman.run("bash", str(REPO / "deploy" / "standin-base-images.sh"), env=podman_env,
               timeout=1800)
    timings["base_images_s"] = time.perf_counter() - start
    start = time.perf_counter()
    podman.run("nice", "-n", "10", "podman", "build", "--pull=never", "-t", "lighttouch:latest",
               str(REPO), env=podman_env, timeout=3600)
    timings["build_s"] = time.perf_counter() - start
    size = podman.run("podman", "image", "inspect", "lighttouch:latest", "--format",
                      "{{.Size}}", env=podman_env).stdout
    timings["image_bytes"] = int(size.strip())
    return "lighttouch:latest"


@dataclass
class ComposeStack:
    """The compose project: its API's URL, the data folder mounted at /data, and podman."""

    env: dict[str, str]
    data: Path
    url: str
    dashboard_url: str
    logs: Path
    timings: dict[str, float] = field(default_factory=dict)
    #: ``time.perf_counter()`` when ``compose up`` was run.
    up_at: float = 0.0

    def compose(self, *args: str, timeout: float = 600) -> str:
        """Run ``podman-compose -p PROJECT --profile dask ARGS`` in the repository."""
        return podman.run(podman.compose_command() or "podman-compose", "-p", PROJECT,
                          "--profile", "dask", *args, env=self.env, cwd=REPO,
                          timeout=timeout).stdout

    def podman(self, *args: str, check: bool = True, timeout: float = 300) -> str:
        """Run ``podman ARGS``; its output."""
        return podman.run("podman", *args, env=self.env, check=check, timeout=timeout).stdout

    def containers(self, service: str) -> list[str]:
        """Names of the service's running containers."""
        names = self.podman("ps", "--filter", f"label=io.podman.compose.project={PROJECT}",
                            "--filter", f"label=com.docker.compose.service={service}",
                            "--format", "{{.Names}}")
        return sorted(names.split())

    def logs_of(self, name: str) -> str:
        """A container's output (podman writes its stderr to stderr)."""
        done = podman.run("podman", "logs", name, env=self.env, check=False)
        return done.stdout + done.stderr

    def redis_cli(self, *args: str) -> str:
        """``redis-cli ARGS`` inside the Redis container."""
        (redis,) = self.containers("redis")
        return self.podman("exec", redis, "redis-cli", *args).strip()

    def client(self) -> httpx.Client:
        """An authenticated HTTP client of the API."""
        return httpx.Client(base_url=self.url, timeout=60,
                            headers={"Authorization": f"Bearer {API_KEY}"})

    def wait_ready(self, timeout_s: float = 180) -> None:
        """Until ``/readyz`` answers 200 (Redis reachable, a worker alive)."""
        def ready() -> bool:
            try:
                return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False
        wait_for(ready, timeout_s, f"{self.url}/readyz")

    def save_logs(self) -> None:
        """Every container's log under ``tests/artifacts/containers/``."""
        self.logs.mkdir(parents=True, exist_ok=True)
        names = self.podman("ps", "-a", "--filter", f"label=io.podman.compose.project={PROJECT}",
                            "--format", "{{.Names}}", check=False)
        for name in names.split():
            (self.logs / f"{name}.log").write_text(self.logs_of(name))

    def remove(self) -> None:
        """Remove the project's containers, pod, network and volume (podman-compose's
        ``down`` refuses to remove containers that others were started with ``--requires``)."""
        label = f"label=io.podman.compose.project={PROJECT}"
        ids = self.podman("ps", "-aq", "--filter", label, check=False).split()
        if ids:
            self.podman("rm", "-f", "-t", "0", *ids, check=False)
        self.podman("pod", "rm", "-f", f"pod_{PROJECT}", check=False)
        self.podman("volume", "rm", "-f", f"{PROJECT}_redis-data", check=False)
        self.podman("network", "rm", "-f", f"{PROJECT}_default", check=False)


def _data_folder(root: Path) -> Path:
    """The folder mounted at /data: the lattice example's pairs as .npz files (sparse, read
    whole) and as dense .npy tables (read in row-aligned partitions)."""
    folder = root / "data"
    folder.mkdir()
    spec = json.loads((REPO / "examples" / "lattice_ranking.json").read_text())
    for side in ("positive", "negative"):
        uri = spec["objective"]["data"][side]["uri"]
        npz = folder / f"lattice_{side}.npz"
        npz.write_bytes(base64.b64decode(uri.split(",", 1)[1]))
        np.save(folder / f"lattice_{side}.npy", sp.load_npz(npz).toarray())
    folder.chmod(0o755)
    for file in folder.iterdir():
        file.chmod(0o644)
    return folder


@pytest.fixture(scope="session")
def stack(podman_env: dict[str, str], image: str, timings: dict[str, float],
          tmp_path_factory) -> Iterator[ComposeStack]:
    """The compose stack with three workers and the Dask profile, removed afterwards."""
    port, dashboard = free_port(), free_port()
    env = {**podman_env, "LIGHTTOUCH_API_KEYS": f"ci:{API_KEY}",
           "LIGHTTOUCH_DATA_DIR": str(_data_folder(tmp_path_factory.mktemp("compose"))),
           "LIGHTTOUCH_PORT": str(port), "LIGHTTOUCH_DASK_DASHBOARD_PORT": str(dashboard),
           "LIGHTTOUCH_HEARTBEAT_S": str(HEARTBEAT_S),
           "LIGHTTOUCH_DASK_SCHEDULER": "tcp://dask-scheduler:8786"}
    compose = ComposeStack(env, Path(env["LIGHTTOUCH_DATA_DIR"]), f"http://127.0.0.1:{port}",
                           f"http://127.0.0.1:{dashboard}", ARTIFACTS / "containers", timings)
    compose.remove()
    compose.up_at = time.perf_counter()
    try:
        compose.compose("up", "-d", "--no-build", "--scale", f"worker={WORKERS}")
        compose.wait_ready()
        timings["up_to_ready_s"] = time.perf_counter() - compose.up_at
        yield compose
    finally:
        compose.save_logs()
        compose.remove()
