"""``GET /``: where to go from the service's root (not part of the OpenAPI document)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from service.ui import PREFIX

router = APIRouter()


@router.get("/", include_in_schema=False)
def home(request: Request) -> Response:
    """A browser (``Accept: text/html``) goes to the dashboard; an API client gets JSON naming
    the dashboard, the API's interactive docs and its OpenAPI document."""
    if "text/html" in request.headers.get("accept", ""):
        return RedirectResponse(f"{PREFIX}/", status_code=303)
    app = request.app
    return JSONResponse({"name": app.title, "version": app.version,
                         "dashboard": f"{PREFIX}/", "docs": app.docs_url,
                         "openapi": app.openapi_url})
