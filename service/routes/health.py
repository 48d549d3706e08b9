"""Liveness, readiness and Prometheus metrics (no authentication)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.exceptions import RedisError

from service.deps import RedisDep, SettingsDep
from service.errors import NotReady, WarmingUp
from service.models import Health
from service.problems import problem_responses
from worker.queue.workers import live_workers, warming_workers

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
def healthz(settings: SettingsDep) -> Health:
    """The process serves requests; whether ``/v1`` needs an API key."""
    return Health(status="ok", api_key_required=not settings.open_mode)


@router.get("/readyz", response_model=Health, responses=problem_responses(503))
def readyz(redis: RedisDep, settings: SettingsDep) -> Health:
    """Redis answers and at least one worker has a recent heartbeat (503 "Workers warming
    up" while the only workers still load their kernels)."""
    try:
        workers = live_workers(redis, settings.heartbeat_s)
        warming = warming_workers(redis) if workers == 0 else 0
    except RedisError as error:
        raise NotReady(f"Redis is unreachable: {error}") from None
    if warming:
        raise WarmingUp(f"{warming} worker(s) warming up: loading numba's compiled kernels "
                        "(seconds from its cache, minutes on a fresh machine); jobs submitted "
                        "now wait in the queue and start once a worker is ready")
    if workers == 0:
        raise NotReady("no worker has sent a heartbeat recently; start 'lighttouch worker'")
    return Health(status="ready", workers=workers, api_key_required=not settings.open_mode)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE_LATEST: {}},
                             "description": "Prometheus text format"}})
def metrics(request: Request) -> Response:
    """Prometheus metrics of this API process and of the queue."""
    return Response(generate_latest(request.app.state.metrics), media_type=CONTENT_TYPE_LATEST)
