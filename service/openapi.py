"""The OpenAPI document: FastAPI's, plus the schemas it cannot see (the spec body, problems).

``python -m service.write_openapi`` rewrites the committed ``openapi/openapi.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from service.problems import Problem
from worker.spec.models import Spec

COMMITTED = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"


def component_schemas(*models: type[BaseModel]) -> dict[str, Any]:
    """JSON schemas of ``models`` and of the models they use, keyed by component name."""
    schemas: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return schemas


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document (built once, then cached on the app)."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version,
                             description=app.description, routes=app.routes)
        known = schema.setdefault("components", {}).setdefault("schemas", {})
        for name, definition in component_schemas(Spec, Problem).items():
            if known.setdefault(name, definition) != definition:
                raise RuntimeError(f"two different OpenAPI schemas are named {name!r}")
        app.openapi_schema = schema
    return app.openapi_schema


def render(app: FastAPI) -> str:
    """The document as committed: sorted keys, two-space indent, final newline."""
    return json.dumps(openapi_schema(app), indent=2, sort_keys=True) + "\n"
