"""The container files parse and keep their promises (no Docker engine runs the tests)."""

from __future__ import annotations

import re

import yaml

from tests.local_stack import REPO


def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_compose_runs_redis_with_aof_and_a_healthcheck():
    redis = compose()["services"]["redis"]
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command and "--appendfsync everysec" in command
    assert "noeviction" in command
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert redis["volumes"] == ["redis-data:/data"]


def test_compose_api_and_workers_wait_for_a_healthy_redis():
    services = compose()["services"]
    for name in ("api", "worker"):
        assert services[name]["depends_on"] == {"redis": {"condition": "service_healthy"}}
        assert services[name]["environment"]["LIGHTTOUCH_REDIS_URL"] == "redis://redis:6379/0"
    assert services["worker"]["command"] == ["lighttouch", "worker"]
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert "/healthz" in " ".join(services["api"]["healthcheck"]["test"])


def test_the_image_is_multi_stage_non_root_and_warms_numba_at_build():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", dockerfile, re.MULTILINE)) >= 2
    users = re.findall(r"^USER (\S+)", dockerfile, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert dockerfile.index("python -m worker.queue.warm_up") > dockerfile.rindex("USER ")
    assert "NUMBA_NUM_THREADS=1" in dockerfile and "NUMBA_CACHE_DIR" in dockerfile
    assert "NUMBA_CPU_NAME=generic" in dockerfile, "a cache that loads on any CPU model"


def test_compose_has_an_optional_dask_profile_on_the_same_image():
    services = compose()["services"]
    scheduler, workers = services["dask-scheduler"], services["dask-worker"]
    assert scheduler["profiles"] == ["dask"] and workers["profiles"] == ["dask"]
    assert scheduler["image"] == workers["image"] == services["worker"]["image"]
    assert scheduler["command"][:2] == ["dask", "scheduler"]
    assert "--port" in scheduler["command"]
    port = scheduler["command"][scheduler["command"].index("--port") + 1]
    assert workers["command"][:3] == ["dask", "worker", f"tcp://dask-scheduler:{port}"]
    assert workers["volumes"] == services["worker"]["volumes"]
    assert "LIGHTTOUCH_DASK_SCHEDULER" in services["worker"]["environment"]
    assert "profiles" not in services["worker"] and "profiles" not in services["api"]


def test_the_dependency_layer_comes_from_the_lock_before_any_code():
    dockerfile = (REPO / "Dockerfile").read_text()
    lock = dockerfile.index("COPY requirements/image.lock")
    assert lock < dockerfile.index("COPY worker") and lock < dockerfile.index("COPY service")
    assert "--no-deps -r /tmp/image.lock" in dockerfile
    runtime = dockerfile[dockerfile.index("AS runtime"):]
    assert runtime.index("COPY --from=deps") < runtime.index("COPY --from=wheel")


def test_the_build_context_holds_only_what_the_build_copies():
    ignored = (REPO / ".dockerignore").read_text().split()
    assert ignored[ignored.index("*") + 1:][:5] == [
        "!requirements/image.lock", "!pyproject.toml", "!README.md", "!worker/", "!service/"]
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", (REPO / "Dockerfile").read_text(),
                        re.MULTILINE)
    for sources in copied:
        for source in sources.split():
            assert f"!{source.rstrip('/')}" in [entry.rstrip("/") for entry in ignored], source


def test_every_bind_source_of_the_compose_file_exists_by_default():
    for name, service in compose()["services"].items():
        for volume in service.get("volumes", []):
            # ${VARIABLE:-default}:/target or source:/target
            source = re.match(r"\$\{\w+:-([^}]*)\}|([^:]+)", volume).group(1, 2)
            source = source[0] or source[1]
            if source.startswith((".", "/")):
                assert (REPO / source).is_dir(), f"{name}: bind source {source} is missing"
