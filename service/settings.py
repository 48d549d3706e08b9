"""The service's settings, read from ``LIGHTTOUCH_*`` variables like the engine's
(:mod:`worker.settings`): :class:`ServiceSettings` (Redis, API keys and the HTTP edge's
limits) and :class:`ClientSettings` (the service ``lighttouch submit`` talks to)."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from worker.settings import MIB, default_max_job_bytes, load_settings, read_settings

TENANT_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class ServiceSettings(BaseSettings):
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
    max_job_bytes: int = Field(
        default_factory=default_max_job_bytes, ge=MIB,
        description="per-job memory budget: a job whose memory estimate exceeds it is refused")
    validate_timeout_s: float = Field(
        120.0, gt=0, allow_inf_nan=False,
        description="seconds POST /v1/validate may spend reading and compiling the data")
    placement_timeout_s: float = Field(
        10.0, gt=0, allow_inf_nan=False,
        description="seconds POST /v1/jobs may spend placing a job from its data's headers; "
                    "past them the job is admitted and its worker places it")
    validate_processes: int = Field(
        2, ge=1, description="validations (child processes) that may run at once")
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


class ClientSettings(BaseSettings):
    """``lighttouch submit``'s defaults for ``--url`` and ``--api-key``: ``LIGHTTOUCH_URL``
    (the API's base URL; default ``http://localhost:8000``) and ``LIGHTTOUCH_API_KEY``."""

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore", frozen=True)

    url: str = "http://localhost:8000"
    api_key: SecretStr | None = None


def load_service_settings() -> ServiceSettings:
    """Validate every engine setting and the service's; raise
    :class:`~worker.errors.ConfigError` naming each invalid variable."""
    load_settings()
    return read_settings(ServiceSettings)


def client_settings() -> ClientSettings:
    """The validated :class:`ClientSettings` (:class:`~worker.errors.ConfigError` if not)."""
    return read_settings(ClientSettings)
