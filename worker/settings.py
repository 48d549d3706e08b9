"""Every setting of every LightTouch process, read from ``LIGHTTOUCH_*`` variables.

No other engine module reads the environment. :func:`load_settings` validates them at the
start of each process (``lighttouch solve/validate/predict``; ``serve`` and ``worker`` also
validate the service's, :mod:`service.settings`), so a bad value stops the process naming
the variable before any work:

* :class:`DataSettings`: what a data reference may reach or spend (decided here, never by
  the spec): hosts http(s) may reach although private, bytes and seconds of one fetch, the
  parsed-data cache, the S3 endpoint and credentials;
* :class:`EngineSettings`: the directories ``file://`` URIs may read;
* :class:`DaskSettings`: the cluster of SVRG OL's batch phase;
* :class:`JobSettings`: all of them as one job runs under them, resolved once at the job's
  edge (the command, the queue's task, the Python API; :func:`job_settings`) and passed down.

Child processes (the local stack's API and workers) get this process's environment with
changes from :func:`child_environment`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeVar

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

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore", frozen=True)

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

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore", frozen=True)

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

    model_config = SettingsConfigDict(env_prefix="LIGHTTOUCH_", extra="ignore", frozen=True)

    dask_scheduler: str | None = None
    dask_timeout_s: float = Field(600.0, gt=0, allow_inf_nan=False)
    partition_bytes: int = Field(DEFAULT_PARTITION_BYTES, ge=1)


def data_settings(max_job_bytes: int | None = None) -> DataSettings:
    """The data settings of one job: the environment's, with the caller's per-job budget
    when it gives one (so the files read and the job are held to the same budget)."""
    settings = read_settings(DataSettings)
    if max_job_bytes is not None:
        settings = settings.model_copy(update={"max_job_bytes": max_job_bytes})
    return settings


def data_roots() -> list[Path]:
    """Directories ``file://`` URIs may read (:class:`EngineSettings`)."""
    return read_settings(EngineSettings).roots()


SettingsKind = TypeVar("SettingsKind", bound=BaseSettings)


def read_settings(kind: type[SettingsKind]) -> SettingsKind:
    """``kind`` read from the environment; :class:`~worker.errors.ConfigError` naming each
    invalid variable.

    Read once per distinct set of ``LIGHTTOUCH_*`` variables (names in any case, as
    pydantic-settings matches them): a read costs a noticeable share of a small solve, which
    asks for its settings more than once (measured: docs/benchmarks.md#fixed-costs-measured).
    The settings returned are shared, so callers copy before changing one (``model_copy``)."""
    variables = tuple(sorted((name, value) for name, value in os.environ.items()
                             if name.upper().startswith("LIGHTTOUCH_")))
    return _settings_under(kind, variables)


@functools.lru_cache(maxsize=64)
def _settings_under(kind: type[SettingsKind],
                    variables: tuple[tuple[str, str], ...]) -> SettingsKind:
    """``kind`` read from the environment, whose ``LIGHTTOUCH_*`` part is ``variables``."""
    try:
        return kind()
    except ValidationError as error:
        raise ConfigError("; ".join(
            f"LIGHTTOUCH_{'_'.join(map(str, item['loc'][:1])).upper()}: {item['msg']}"
            for item in error.errors(include_url=False))) from None


def load_settings() -> None:
    """Validate every engine setting; raise :class:`~worker.errors.ConfigError` naming each
    invalid variable (the service's own are :func:`service.settings.load_service_settings`)."""
    for kind in (DataSettings, EngineSettings, DaskSettings):
        read_settings(kind)


def child_environment(changes: Mapping[str, str]) -> dict[str, str]:
    """The environment of a child process: this process's, with ``changes``."""
    return {**os.environ, **changes}


@dataclass(frozen=True)
class JobSettings:
    """The settings one job runs under (:func:`job_settings`).

    Attributes
    ----------
    roots : tuple of Path
        Directories ``file://`` URIs may read.
    data : DataSettings
        The data settings, whose ``max_job_bytes`` is the job's budget and each file's.
    cluster : DaskSettings
        The cluster of SVRG OL's batch phase.
    memory_limit : int or None
        The budget the job's memory estimate is checked against; None: it is not checked.
    time_limit_s : float or None
        The most seconds the service lets the job's solver take (its job timeout); None: the
        spec's ``solver.time_limit_s`` alone.
    """

    roots: tuple[Path, ...]
    data: DataSettings
    cluster: DaskSettings
    memory_limit: int | None = None
    time_limit_s: float | None = None

    def time_limit(self, requested: float) -> float:
        """The solver's time limit: the spec's ``requested`` seconds, or the job's
        :attr:`time_limit_s` when smaller."""
        return requested if self.time_limit_s is None else min(requested, self.time_limit_s)


def job_settings(max_job_bytes: int | None = None,
                 roots: Sequence[Path] | None = None,
                 time_limit_s: float | None = None) -> JobSettings:
    """One job's settings, read from the environment at the job's edge.

    Parameters
    ----------
    max_job_bytes : int, optional
        The job's budget: its memory estimate is checked against it, and each file read is
        held to it. Default: ``LIGHTTOUCH_MAX_JOB_BYTES`` for the files, no check of the
        estimate.
    roots : sequence of Path, optional
        Directories ``file://`` URIs may read; default :func:`data_roots`.
    time_limit_s : float, optional
        The service's cap on the solver's seconds (:attr:`JobSettings.time_limit_s`).

    Returns
    -------
    JobSettings
    """
    return JobSettings(tuple(roots) if roots is not None else tuple(data_roots()),
                       data_settings(max_job_bytes), read_settings(DaskSettings),
                       max_job_bytes, time_limit_s)


def budgeted_settings() -> JobSettings:
    """The settings of a job solved in this process at its edge (``lighttouch solve`` and
    ``validate``, ``lighttouch.solve``): :func:`job_settings` with the job's memory estimate
    checked against ``LIGHTTOUCH_MAX_JOB_BYTES``, as the service checks its jobs."""
    return job_settings(read_settings(DataSettings).max_job_bytes)


def call_settings(settings: JobSettings | None, roots: Sequence[Path] | None,
                  max_job_bytes: int | None) -> JobSettings:
    """The settings of a call that takes either ``settings`` resolved by its caller or
    ``roots`` and ``max_job_bytes`` (a library call, then its own edge: :func:`job_settings`).

    Raises
    ------
    ValueError
        ``settings`` with ``roots`` or ``max_job_bytes``: they belong in the settings.
    """
    if settings is None:
        return job_settings(max_job_bytes, roots)
    if roots is not None or max_job_bytes is not None:
        raise ValueError("give roots and max_job_bytes in the settings, not beside them")
    return settings
