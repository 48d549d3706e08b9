"""FastAPI dependencies: the app's clients and settings, the caller's tenant, the spec body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import redis
import redis.asyncio
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.errors import BodyTooLarge, UnsupportedMediaType
from service.settings import ServiceSettings
from worker.errors import SpecError
from worker.spec.json_text import decode_spec_json

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
    """Check the body is declared JSON (415 otherwise), read at most ``max_body_bytes`` (413
    beyond) and decode it (422 naming any value that is not usable JSON)."""
    if not is_json_media_type(request.headers.get("content-type", "")):
        raise UnsupportedMediaType("the body must be JSON: send it with Content-Type: "
                                   "application/json")
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
    except UnicodeDecodeError as error:
        raise SpecError.at("", f"the request body is not UTF-8 text: {error}") from None
    return JsonBody(text, decode_spec_json(text))


def is_json_media_type(content_type: str) -> bool:
    """Whether a Content-Type header names JSON: ``application/json`` or ``application/*+json``
    (parameters such as ``charset`` aside)."""
    media_type = content_type.partition(";")[0].strip().lower()
    return media_type == "application/json" or (media_type.startswith("application/")
                                                and media_type.endswith("+json"))


SettingsDep = Annotated[ServiceSettings, Depends(_settings)]
RedisDep = Annotated[redis.Redis, Depends(_redis)]
StreamRedisDep = Annotated[redis.asyncio.Redis, Depends(_stream_redis)]
Tenant = Annotated[str, Depends(_tenant)]
Body = Annotated[JsonBody, Depends(_json_body)]
