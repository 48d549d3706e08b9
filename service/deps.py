"""FastAPI dependencies: the app's clients and settings, the caller's tenant, the spec body."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

import redis
import redis.asyncio
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.errors import BodyTooLarge
from worker.errors import SpecError
from worker.settings import ServiceSettings

_bearer = HTTPBearer(auto_error=False, description="an API key from LIGHTTOUCH_API_KEYS")


def _settings(request: Request) -> ServiceSettings:
    return request.app.state.settings


def _redis(request: Request) -> redis.Redis:
    return request.app.state.redis


def _stream_redis(request: Request) -> redis.asyncio.Redis:
    return request.app.state.stream_redis


def _tenant(request: Request,
            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    return request.app.state.keyring.tenant(credentials.credentials if credentials else None)


@dataclass(frozen=True)
class JsonBody:
    """A request body decoded as JSON, with its text."""

    text: str
    value: Any


async def _json_body(request: Request, settings: Annotated[ServiceSettings, Depends(_settings)]
                     ) -> JsonBody:
    """Read at most ``max_body_bytes`` (413 beyond) and decode JSON (422 if it is not)."""
    limit = settings.max_body_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(limit)
    try:
        text = body.decode("utf-8")
        return JsonBody(text, json.loads(text))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecError.at("", f"the request body is not UTF-8 JSON: {error}") from None


SettingsDep = Annotated[ServiceSettings, Depends(_settings)]
RedisDep = Annotated[redis.Redis, Depends(_redis)]
StreamRedisDep = Annotated[redis.asyncio.Redis, Depends(_stream_redis)]
Tenant = Annotated[str, Depends(_tenant)]
Body = Annotated[JsonBody, Depends(_json_body)]
