"""Every setting of every LightTouch process, read from ``LIGHTTOUCH_*`` variables.

No other module reads the environment. :func:`load_settings` validates them at the start of
each process (``lighttouch solve/validate/predict``: the engine's; ``serve`` and ``worker``:
all; ``submit``: :func:`client_settings`), so a bad value stops the process naming the
variable before any work:

* :class:`DataSettings`: what a data reference may reach or spend (decided here, never by
  the spec): hosts http(s) may reach although private, bytes and seconds of one fetch, the
  parsed-data cache, the S3 endpoint and credentials;
* :class:`EngineSettings`: the directories ``file://`` URIs may read;
* :class:`DaskSettings`: the cluster of SVRG OL's batch phase;
* :class:`ServiceSettings`: Redis, API keys and the HTTP edge's limits;
* :class:`ClientSettings`: the service ``lighttouch submit`` talks to.

Child processes (the local stack's API and workers) get this process's environment with
changes from :func:`child_environment`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from worker.errors import ConfigError

#: Default cap on the bytes of one referenced file (fetched or local): 2 GiB.
DEFAULT_MAX_DATA_BYTES = 2 * 2**30

#: Default time limit of one http(s) or s3 request, in seconds.
DEFAULT_FETCH_TIMEOUT_S = 300.0

#: Default size cap of the parsed-data cache: 10 GiB (0 disables the cache).
DEFAULT_CACHE_BYTES = 10 * 2**30


MIB = 1024 * 1024


#: The share of the machine's memory one job may use by default.
JOB_MEMORY_SHARE = 0.5


def default_max_job_bytes() -> int:
    """Half of this machine's physical memory (``LIGHTTOUCH_MAX_JOB_BYTES``'s default)."""
    return int(JOB_MEMORY_SHARE * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/lighttouch/data``, else ``~/.cache/lighttouch/data``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lighttouch" / "data"


class DataSettings(BaseSettings):
    """Limits and endpoints for reading data references.

    ===============================  =======================================================
    variable                         meaning (default)
    ===============================  =======================================================
    ``LIGHTTOUCH_URI_ALLOW_HOSTS``   comma-separated ``host[:port]`` that http(s) may reach
                                     even when they resolve to loopback, private or
                                     link-local addresses (none)
    ``LIGHTTOUCH_MAX_DATA_BYTES``    bytes one referenced file may hold (2 GiB)
    ``LIGHTTOUCH_MAX_JOB_BYTES``     the per-job memory budget, which also caps what one
                                     file may expand to once read (half the memory)
    ``LIGHTTOUCH_FETCH_TIMEOUT_S``   seconds one http(s)/s3 request may take (300)
    ``LIGHTTOUCH_DATA_CACHE_DIR``    parsed-data cache (``~/.cache/lighttouch/data``)
    ``LIGHTTOUCH_DATA_CACHE_BYTES``  cache size cap; 0 turns the cache off (10 GiB)
    ``LIGHTTOUCH_S3_ENDPOINT_URL``   S3 endpoint (AWS when empty)
    ``LIGHTTOUCH_S3_REGION``         S3 region (none)
    ``LIGHTTOUCH_S3_ACCESS_KEY_ID``  S3 credentials; anonymous access when empty
    ``LIGHTTOUCH_S3_SECRET_ACCESS_KEY``
    ===============================  =======================================================
    """

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore")

    uri_allow_hosts: Annotated[list[str], NoDecode] = []
    max_data_bytes: int = Field(DEFAULT_MAX_DATA_BYTES, gt=0)
    max_job_bytes: int = Field(default_factory=default_max_job_bytes, ge=MIB)
    fetch_timeout_s: float = Field(DEFAULT_FETCH_TIMEOUT_S, gt=0, allow_inf_nan=False)
    data_cache_dir: Path = Field(default_factory=default_cache_dir)
    data_cache_bytes: int = Field(DEFAULT_CACHE_BYTES, ge=0)
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = None

    @field_validator("uri_allow_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        """A comma-separated string becomes a list of lower-case ``host[:port]`` entries."""
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list):
            return [entry.strip().lower() for entry in value if str(entry).strip()]
        return value


#: Bytes of one svmlight or csv partition when ``LIGHTTOUCH_PARTITION_BYTES`` is unset (64 MiB).
DEFAULT_PARTITION_BYTES = 2**26


class EngineSettings(BaseSettings):
    """``LIGHTTOUCH_DATA_ROOTS``: ``:``-separated directories ``file://`` URIs may read
    (default: the current directory)."""

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore")

    data_roots: str = ""

    def roots(self) -> list[Path]:
        """The data roots, resolved."""
        return [Path(entry).resolve() for entry in self.data_roots.split(":") if entry] \
            or [Path.cwd()]


class DaskSettings(BaseSettings):
    """``LIGHTTOUCH_DASK_SCHEDULER`` (address of an existing scheduler, e.g.
    ``tcp://dask-scheduler:8786``; empty: a LocalCluster), ``LIGHTTOUCH_DASK_TIMEOUT_S``
    (the longest one round, including connecting, may take; default 600) and
    ``LIGHTTOUCH_PARTITION_BYTES`` (bytes of an svmlight or csv partition; default 64 MiB)."""

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore")

    dask_scheduler: str | None = None
    dask_timeout_s: float = Field(600.0, gt=0, allow_inf_nan=False)
    partition_bytes: int = Field(DEFAULT_PARTITION_BYTES, ge=1)


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

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore")

    url: str = "http://localhost:8000"
    api_key: SecretStr | None = None


def data_roots() -> list[Path]:
    """Directories ``file://`` URIs may read (:class:`EngineSettings`)."""
    return EngineSettings().roots()


SettingsKind = TypeVar("SettingsKind", bound=BaseSettings)


def _read(kind: type[SettingsKind]) -> SettingsKind:
    """``kind`` read from the environment; :class:`~worker.errors.ConfigError` naming each
    invalid variable."""
    try:
        return kind()
    except ValidationError as error:
        raise ConfigError("; ".join(
            f"LIGHTTOUCH_{'_'.join(map(str, item['loc'][:1])).upper()}: {item['msg']}"
            for item in error.errors(include_url=False))) from None


def load_settings(service: bool = False) -> ServiceSettings | None:
    """Validate every engine setting (and the service's, if ``service``); raise
    :class:`~worker.errors.ConfigError` naming each invalid variable.

    Returns the :class:`ServiceSettings` when ``service``, else None.
    """
    for kind in (DataSettings, EngineSettings, DaskSettings):
        _read(kind)
    return _read(ServiceSettings) if service else None


def client_settings() -> ClientSettings:
    """The validated :class:`ClientSettings` (:class:`~worker.errors.ConfigError` if not)."""
    return _read(ClientSettings)


def child_environment(changes: Mapping[str, str]) -> dict[str, str]:
    """The environment of a child process: this process's, with ``changes``."""
    return {**os.environ, **changes}
