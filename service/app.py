"""The FastAPI application factory (``uvicorn --factory service.app:create_app``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

import redis
import redis.asyncio
from fastapi import FastAPI
from fastapi.routing import APIRoute
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from starlette.concurrency import run_in_threadpool

from service import problems, ui
from service.auth import KeyRing
from service.metrics import HttpMetrics, metrics_registry
from service.openapi import openapi_schema
from service.routes import algorithms, health, home, jobs
from service.settings import ServiceSettings, load_service_settings
from worker.queue.workers import reap_abandoned

log = logging.getLogger(__name__)

#: Seconds an event stream's blocking read may wait beyond its keep-alive period before the
#: Redis connection is taken as dead (the client's default socket timeout, 5 s, would end
#: every wait longer than that with an error that drops the stream).
STREAM_READ_MARGIN_S = 10.0


def _operation_id(route: APIRoute) -> str:
    """A route's operationId is its function's name (``submit_job``): what client generators
    name their functions after."""
    return route.name


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    """A configured app; settings default to the ``LIGHTTOUCH_*`` environment."""
    settings = settings or load_service_settings()
    app = FastAPI(title="LightTouch", version=version("lighttouch"), lifespan=_lifespan,
                  description="Heavily constrained stochastic optimization as a service.",
                  generate_unique_id_function=_operation_id)
    app.state.settings = settings
    app.state.keyring = KeyRing(settings.api_keys)
    app.state.redis = redis.Redis.from_url(settings.redis_url, health_check_interval=30)
    app.state.metrics, latency = metrics_registry(app.state.redis, settings.heartbeat_s)
    problems.install(app)
    app.add_middleware(HttpMetrics, latency=latency)
    app.include_router(jobs.router)
    app.include_router(algorithms.router)
    app.include_router(health.router)
    app.include_router(home.router)
    ui.install(app)
    app.openapi = lambda: openapi_schema(app)  # type: ignore[method-assign]
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: ServiceSettings = app.state.settings
    if settings.open_mode:
        log.warning("LIGHTTOUCH_API_KEYS is empty: open dev mode, every caller is tenant 'dev'")
    # One retry on a fresh connection when a pooled one turns out closed (Redis restarted
    # since it was last used); a timeout is not retried: it is the dead-connection bound.
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        settings.redis_url, max_connections=settings.sse_max_streams,
        socket_timeout=settings.sse_keepalive_s + STREAM_READ_MARGIN_S,
        retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)))
    app.state.stream_redis = redis.asyncio.Redis(connection_pool=pool)
    reaper = asyncio.create_task(_reap_forever(app.state.redis, settings.heartbeat_s))
    try:
        yield
    finally:
        reaper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reaper
        await app.state.stream_redis.aclose()
        await pool.disconnect()
        app.state.redis.close()


async def _reap_forever(connection: redis.Redis, period_s: int) -> None:
    """Fail jobs of dead workers every ``period_s``
    (:func:`worker.queue.workers.reap_abandoned`)."""
    while True:
        try:
            await run_in_threadpool(reap_abandoned, connection, period_s)
        except RedisError as error:
            log.warning("reaping abandoned jobs failed: %s", error)
        await asyncio.sleep(period_s)
