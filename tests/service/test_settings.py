"""Settings fail fast on bad values, naming the variable; API keys parse to tenants."""

from __future__ import annotations

import pytest

from service.auth import DEV_TENANT, KeyRing
from service.errors import ConfigError, Unauthorized
from service.settings import Settings, load_settings


@pytest.mark.parametrize(("variable", "value"), [
    ("LIGHTTOUCH_HEARTBEAT_S", "0"), ("LIGHTTOUCH_RESULT_TTL_S", "ten"),
    ("LIGHTTOUCH_REDIS_URL", "http://localhost"), ("LIGHTTOUCH_MAX_BODY_BYTES", "-1"),
    ("LIGHTTOUCH_API_KEYS", "alpha"), ("LIGHTTOUCH_API_KEYS", "alpha:short"),
    ("LIGHTTOUCH_API_KEYS", "a:same-key-1,b:same-key-1"),
    ("LIGHTTOUCH_API_KEYS", "bad tenant:longenough"), ("LIGHTTOUCH_JOB_TIMEOUT_S", "inf"),
    ("LIGHTTOUCH_MAX_DATA_BYTES", "0"),   # the data layer's, checked at start as well
])
def test_an_invalid_variable_stops_the_start_naming_it(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


def test_api_keys_map_keys_to_tenants(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_API_KEYS", " alpha:key-alpha-1 , beta:key-beta-22,")
    keyring = KeyRing(load_settings().api_keys)
    assert keyring.tenant("key-alpha-1") == "alpha" and keyring.tenant("key-beta-22") == "beta"
    for bad in (None, "", "key-alpha-"):
        with pytest.raises(Unauthorized):
            keyring.tenant(bad)


def test_no_keys_is_open_dev_mode():
    settings = Settings(api_keys={})
    assert settings.open_mode and KeyRing(settings.api_keys).tenant(None) == DEV_TENANT
