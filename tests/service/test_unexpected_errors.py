"""The last-resort middleware: an exception no handler takes becomes the logged 500 problem,
answered like any response (the server keeps the connection), never a traceback."""

from __future__ import annotations

import asyncio

import httpx
from fastapi import FastAPI

from service.problems import install


def failing_app() -> FastAPI:
    app = FastAPI()
    install(app)

    @app.get("/broken")
    def broken() -> None:
        raise ZeroDivisionError("a bug")

    return app


def test_an_unhandled_exception_is_a_500_problem_without_its_message():
    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(failing_app(), raise_app_exceptions=True)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get("/broken")

    response = asyncio.run(get())
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["detail"] == "internal error; it has been logged"
    assert "a bug" not in response.text
