"""Fixtures: a private redis-server for the session, a clean database for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis import Redis

from tests.local_stack import RedisServer


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A throw-away redis-server on a free port."""
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture
def connection(redis_server: RedisServer) -> Iterator[Redis]:
    """A client of an empty database, flushed again after the test."""
    client = Redis.from_url(redis_server.url(0))
    client.flushdb()
    yield client
    client.flushdb()
    client.close()
