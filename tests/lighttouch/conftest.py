"""Fixtures: the session's redis-server (tests/service) and a stack of real API and worker
processes on a database of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lighttouch import Client
from tests.local_stack import KEYS, RedisServer, Stack
from tests.service.conftest import redis_server  # noqa: F401  (the fixture)

#: This directory's Redis databases: the shared stack's, and the restarted one's.
STACK_DATABASE, RESTART_DATABASE = 12, 13
#: The stack's body cap: below the 16 MiB default, above the Adult walk-through's 7 MiB.
MAX_BODY_BYTES = 12 * 2**20


@pytest.fixture(scope="session")
def stack(redis_server: RedisServer, tmp_path_factory) -> Iterator[Stack]:  # noqa: F811
    """An API and one worker; 1 s keep-alives, bodies up to :data:`MAX_BODY_BYTES`."""
    running = Stack(redis_server.url(STACK_DATABASE), tmp_path_factory.mktemp("lighttouch"),
                    {"LIGHTTOUCH_SSE_KEEPALIVE_S": "1",
                     "LIGHTTOUCH_MAX_BODY_BYTES": str(MAX_BODY_BYTES)})
    running.start_api()
    running.start_worker()
    yield running
    running.close()


@pytest.fixture
def client(stack: Stack) -> Iterator[Client]:
    """A :class:`lighttouch.Client` of the stack, as tenant alpha."""
    with Client(stack.url, KEYS["alpha"]) as connected:
        yield connected
