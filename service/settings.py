"""The service's one configuration object, read from ``LIGHTTOUCH_*`` environment variables."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from service.errors import ConfigError
from worker.data.settings import DataSettings

TENANT_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MIB = 1024 * 1024


class Settings(BaseSettings):
    """Service configuration; invalid values stop the process at start with the variable named."""

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore", frozen=True)

    redis_url: str = Field("redis://localhost:6379/0",
                           description="Redis for the queue, events and results")
    api_keys: Annotated[dict[str, str], NoDecode] = Field(
        default_factory=dict,
        description="'tenant:key,tenant2:key2'; empty means open dev mode (one tenant 'dev')")
    max_body_bytes: int = Field(16 * MIB, ge=1024, description="request body cap (413 above)")
    job_timeout_s: float = Field(3600.0, gt=0, allow_inf_nan=False,
                                 description="cap on a job's solver time limit")
    result_ttl_s: int = Field(86_400, ge=60,
                              description="seconds results, events and job records are kept")
    max_active_jobs: int = Field(100, ge=1,
                                 description="per-tenant cap on queued + running jobs (429)")
    heartbeat_s: int = Field(5, ge=1, le=300,
                             description="worker heartbeat and dead-worker reaping period")
    sse_keepalive_s: float = Field(15.0, gt=0, le=300, allow_inf_nan=False,
                                   description="seconds between SSE keep-alive comments")
    sse_max_streams: int = Field(256, ge=1,
                                 description="Redis connections for blocking event reads")

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str) -> str:
        if urlsplit(value).scheme not in ("redis", "rediss", "unix"):
            raise ValueError("must be a redis://, rediss:// or unix:// URL")
        return value

    @field_validator("api_keys", mode="before")
    @classmethod
    def _parse_api_keys(cls, value: Any) -> Any:
        """``tenant:key,tenant2:key2`` → ``{key: tenant}``."""
        if not isinstance(value, str):
            return value
        keys: dict[str, str] = {}
        for entry in filter(None, (part.strip() for part in value.split(","))):
            tenant, _, api_key = entry.partition(":")
            if not TENANT_PATTERN.fullmatch(tenant) or len(api_key) < 8:
                raise ValueError(f"entry {tenant!r}: expected tenant:key with a tenant of "
                                 "letters, digits, '_', '.', '-' and a key of 8+ characters")
            if api_key in keys:
                raise ValueError(f"tenants {keys[api_key]!r} and {tenant!r} share a key")
            keys[api_key] = tenant
        return keys

    @property
    def open_mode(self) -> bool:
        """No API keys configured: every request is tenant ``dev`` (development only)."""
        return not self.api_keys


def load_settings() -> Settings:
    """Settings from the environment; :class:`ConfigError` naming each invalid variable.

    The data layer's own variables (:class:`~worker.data_settings.DataSettings`, which the
    engine reads where it loads data) are checked here too, so a bad value stops the start.
    """
    try:
        DataSettings()
        return Settings()
    except ValidationError as error:
        raise ConfigError("; ".join(
            f"LIGHTTOUCH_{'_'.join(map(str, item['loc'][:1])).upper()}: {item['msg']}"
            for item in error.errors(include_url=False))) from None
