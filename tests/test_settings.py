"""The one settings module: bad values stop every process at start naming the variable;
API keys parse to tenants; data roots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.auth import DEV_TENANT, KeyRing
from service.errors import Unauthorized
from worker.errors import ConfigError
from worker.settings import ServiceSettings, data_roots, load_settings


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
        load_settings(service=True)


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


def test_service_variables_do_not_stop_the_engine(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_HEARTBEAT_S", "0")
    assert load_settings() is None


def test_data_roots(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", f"{tmp_path}::{tmp_path / 'b'}")
    assert data_roots() == [tmp_path.resolve(), (tmp_path / "b").resolve()]
    monkeypatch.delenv("LIGHTTOUCH_DATA_ROOTS")
    assert data_roots() == [Path.cwd()]


def test_api_keys_map_keys_to_tenants(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_API_KEYS", " alpha:key-alpha-1 , beta:key-beta-22,")
    keyring = KeyRing(load_settings(service=True).api_keys)
    assert keyring.tenant("key-alpha-1") == "alpha" and keyring.tenant("key-beta-22") == "beta"
    for bad in (None, "", "key-alpha-"):
        with pytest.raises(Unauthorized):
            keyring.tenant(bad)


def test_no_keys_is_open_dev_mode():
    settings = ServiceSettings(api_keys={})
    assert settings.open_mode and KeyRing(settings.api_keys).tenant(None) == DEV_TENANT
