"""A test module's own stack, for tests that kill its processes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.local_stack import RedisServer, Stack


@contextmanager
def api_stack(redis_server: RedisServer, logs: Path, database: int,
              settings: dict[str, str] | None = None) -> Iterator[Stack]:
    """An API on its own Redis database (workers are started by the tests), with extra
    ``LIGHTTOUCH_*`` ``settings``; closed after."""
    stack = Stack(redis_server.url(database), logs, settings or {})
    stack.start_api()
    try:
        yield stack
    finally:
        stack.close()
