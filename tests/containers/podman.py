"""Podman for the container tests: its configuration under one cache directory, and commands.

Everything podman writes (image storage, run state, networks, volumes, events) lives under
``LIGHTTOUCH_CONTAINER_CACHE`` (default ``/var/cache/lighttouch-containers``), outside the
repository, so a second run on the same machine reuses the base images and the image's
dependency layer. The settings are those a root-run podman 4.3 needed on Debian 12 hosts
with a hybrid cgroup layout and without ``CAP_SYS_RESOURCE``:

- ``runtime = "runc"``: crun 1.8 refuses hybrid cgroup v1/v2 hosts ("cgroups in hybrid
  mode not supported").
- ``default_ulimits``: podman's defaults (nofile 1048576) need ``CAP_SYS_RESOURCE`` to set;
  podman lowers its own nproc limit to ``pid_max``, so nproc stays <= 32768.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("LIGHTTOUCH_CONTAINER_CACHE", "/var/cache/lighttouch-containers"))

CONTAINERS_CONF = """[engine]
runtime = "runc"
tmp_dir = "{cache}/runroot/libpod-tmp"
volume_path = "{cache}/volumes"
static_dir = "{cache}/storage/libpod"
events_logger = "file"
events_logfile_path = "{cache}/logs/podman-events.log"
[network]
network_config_dir = "{cache}/netconf"
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
"""

STORAGE_CONF = """[storage]
driver = "overlay"
graphroot = "{cache}/storage"
runroot = "{cache}/runroot"
"""


def environment() -> dict[str, str]:
    """The process environment with podman pointed at the cache directory's configuration."""
    for sub in ("conf", "storage", "runroot", "tmp", "netconf", "volumes", "logs"):
        (CACHE / sub).mkdir(parents=True, exist_ok=True)
    (CACHE / "conf" / "containers.conf").write_text(CONTAINERS_CONF.format(cache=CACHE))
    (CACHE / "conf" / "storage.conf").write_text(STORAGE_CONF.format(cache=CACHE))
    return {**os.environ, "CONTAINERS_CONF": str(CACHE / "conf" / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(CACHE / "conf" / "storage.conf"),
            "TMPDIR": str(CACHE / "tmp")}


def missing_tools() -> list[str]:
    """The commands the container tests need that this machine lacks."""
    tools = {"podman": shutil.which("podman"), "podman-compose": compose_command(),
             "debootstrap": shutil.which("debootstrap"), "runc": shutil.which("runc")}
    return [name for name, path in tools.items() if path is None]


def compose_command() -> str | None:
    """podman-compose beside this interpreter (the CI venv) or on PATH."""
    beside = Path(sys.executable).parent / "podman-compose"
    return str(beside) if beside.exists() else shutil.which("podman-compose")


def run(*args: str, env: dict[str, str], check: bool = True, timeout: float = 600,
        **kwargs) -> subprocess.CompletedProcess:
    """Run a command (``podman ...``), capturing its text output; raise with it on failure."""
    done = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=timeout,
                          **kwargs)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}:\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done
