"""Server settings of the data layer, read from ``LIGHTTOUCH_*`` variables.

Everything a data reference may reach or spend is decided here, never by the spec: which
hosts http(s) may reach although they are private, how many bytes and seconds one fetch may
take, where the parsed-data cache lives and how large it may grow, and the S3 endpoint and
credentials.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

#: Default cap on the bytes of one referenced file (fetched or local): 2 GiB.
DEFAULT_MAX_DATA_BYTES = 2 * 2**30

#: Default time limit of one http(s) or s3 request, in seconds.
DEFAULT_FETCH_TIMEOUT_S = 300.0

#: Default size cap of the parsed-data cache: 10 GiB (0 disables the cache).
DEFAULT_CACHE_BYTES = 10 * 2**30


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
