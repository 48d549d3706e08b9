"""The web dashboard: static files under ``/ui/`` (``service/ui/static``), no build step.

The pages use only the public ``/v1`` API from the browser. Every ``/ui/`` response carries a
strict Content-Security-Policy (scripts, styles and connections from this origin only; no
inline code; no framing), ``X-Content-Type-Options: nosniff`` and no referrer.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.responses import RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(__file__).parent / "static"
PREFIX = "/ui"
CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
    "img-src 'self' data:", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"))
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


class SecureHeaders:
    """ASGI wrapper adding :data:`SECURITY_HEADERS` to every response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(name, value) for name, value in message.get("headers", [])
                           if name.decode().lower() not in SECURITY_HEADERS]
                headers += [(name.encode(), value.encode())
                            for name, value in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)
        await self.app(scope, receive, send_with_headers)


def install(app: FastAPI) -> None:
    """Serve the dashboard at ``/ui/`` (``/ui`` redirects there); not part of the OpenAPI."""
    @app.get(PREFIX, include_in_schema=False)
    def dashboard() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/")

    app.mount(PREFIX, SecureHeaders(StaticFiles(directory=STATIC, html=True)), name="ui")
