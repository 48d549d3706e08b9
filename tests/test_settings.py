"""The one settings module: bad values stop every process at start naming the variable;
API keys parse to tenants; data roots; the client's defaults; child environments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.auth import DEV_TENANT, KeyRing
from service.errors import Unauthorized
from service.settings import ServiceSettings, client_settings, load_service_settings
from worker.errors import ConfigError
from worker.settings import (
    call_settings,
    child_environment,
    data_roots,
    job_settings,
    load_settings,
)


@pytest.mark.parametrize(("variable", "value"), [
    ("LIGHTTOUCH_HEARTBEAT_S", "0"), ("LIGHTTOUCH_RESULT_TTL_S", "ten"),
    ("LIGHTTOUCH_REDIS_URL", "http://localhost"), ("LIGHTTOUCH_MAX_BODY_BYTES", "-1"),
    ("LIGHTTOUCH_API_KEYS", "alpha"), ("LIGHTTOUCH_API_KEYS", "alpha:short"),
    ("LIGHTTOUCH_API_KEYS", "a:same-key-1,b:same-key-1"),
    ("LIGHTTOUCH_API_KEYS", "bad tenant:longenough"), ("LIGHTTOUCH_JOB_TIMEOUT_S", "inf"),
    ("LIGHTTOUCH_MAX_DATA_BYTES", "0"), ("LIGHTTOUCH_DASK_TIMEOUT_S", "-3"),
    ("LIGHTTOUCH_PARTITION_BYTES", "0"),
])
def test_an_invalid_variable_stops_the_service_start_naming_it(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable):
        load_service_settings()


@pytest.mark.parametrize(("variable", "value"), [
    ("LIGHTTOUCH_MAX_DATA_BYTES", "0"), ("LIGHTTOUCH_DASK_TIMEOUT_S", "soon"),
    ("LIGHTTOUCH_DATA_CACHE_BYTES", "-1"),
])
def test_the_engine_commands_check_the_engine_settings(monkeypatch, tmp_path, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()
    spec = tmp_path / "spec.json"
    spec.write_text("{}")
    done = subprocess.run([sys.executable, "-m", "service.cli", "validate", str(spec)],
                          capture_output=True, text=True, env={**os.environ, variable: value},
                          timeout=120)
    assert done.returncode == 1 and variable in done.stderr


def lighttouch(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "service.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize("command", [("serve", "--port", "9"), ("worker", "--burst")])
def test_serve_and_worker_stop_at_start_naming_the_variable(command):
    done = lighttouch(*command, env={"LIGHTTOUCH_HEARTBEAT_S": "0",
                                     "LIGHTTOUCH_REDIS_URL": "redis://127.0.0.1:9/0"})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "LIGHTTOUCH_HEARTBEAT_S: Input should be greater than or equal to 1" in done.stderr


def test_submit_reads_its_service_from_the_environment(monkeypatch):
    monkeypatch.delenv("LIGHTTOUCH_URL", raising=False)
    monkeypatch.delenv("LIGHTTOUCH_API_KEY", raising=False)
    assert client_settings().url == "http://localhost:8000"
    assert client_settings().api_key is None
    monkeypatch.setenv("LIGHTTOUCH_URL", "http://api.internal:8080")
    monkeypatch.setenv("LIGHTTOUCH_API_KEY", "key-alpha-0001")
    defaults = client_settings()
    assert defaults.url == "http://api.internal:8080"
    assert defaults.api_key.get_secret_value() == "key-alpha-0001"
    assert "key-alpha-0001" not in repr(defaults)


def test_a_child_process_gets_this_environment_with_the_changes(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_HEARTBEAT_S", "3")
    child = child_environment({"LIGHTTOUCH_REDIS_URL": "redis://127.0.0.1:7/1"})
    assert child["LIGHTTOUCH_REDIS_URL"] == "redis://127.0.0.1:7/1"
    assert child["LIGHTTOUCH_HEARTBEAT_S"] == "3" and child["PATH"] == os.environ["PATH"]


def test_service_variables_do_not_stop_the_engine(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_HEARTBEAT_S", "0")
    assert load_settings() is None


def test_data_roots(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", f"{tmp_path}::{tmp_path / 'b'}")
    assert data_roots() == [tmp_path.resolve(), (tmp_path / "b").resolve()]
    monkeypatch.delenv("LIGHTTOUCH_DATA_ROOTS")
    assert data_roots() == [Path.cwd()]


def test_a_jobs_settings_hold_its_budget_and_roots(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    settings = job_settings(2**30)
    assert settings.roots == (tmp_path.resolve(),)
    assert settings.data.max_job_bytes == settings.memory_limit == 2**30
    assert job_settings(roots=[Path("/srv")]).roots == (Path("/srv"),)
    assert job_settings().memory_limit is None
    assert call_settings(settings, None, None) is settings
    with pytest.raises(ValueError, match="in the settings"):
        call_settings(settings, [tmp_path], None)


def test_api_keys_map_keys_to_tenants(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_API_KEYS", " alpha:key-alpha-1 , beta:key-beta-22,")
    keyring = KeyRing(load_service_settings().api_keys)
    assert keyring.tenant("key-alpha-1") == "alpha" and keyring.tenant("key-beta-22") == "beta"
    for bad in (None, "", "key-alpha-"):
        with pytest.raises(Unauthorized):
            keyring.tenant(bad)


def test_no_keys_is_open_dev_mode():
    settings = ServiceSettings(api_keys={})
    assert settings.open_mode and KeyRing(settings.api_keys).tenant(None) == DEV_TENANT
