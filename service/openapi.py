"""The OpenAPI document: FastAPI's, plus the schemas it cannot see (the spec body, problems).

Written for client generators too (``tests/service/test_generated_client.py``): operations
are named by their functions, and a constant among a union's alternatives (``"auto" | int``)
is a one-value ``enum``, the form generators parse as "try this, else the next one".

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
        app.openapi_schema = _constants_as_enums(schema)
    return app.openapi_schema


def _constants_as_enums(node: Any, in_union: bool = False) -> Any:
    """``node`` with every ``const`` that is an alternative of an ``anyOf``/``oneOf`` written
    as the equivalent one-value ``enum``."""
    if isinstance(node, list):
        return [_constants_as_enums(item, in_union) for item in node]
    if not isinstance(node, dict):
        return node
    rewritten = {key: _constants_as_enums(value, key in ("anyOf", "oneOf"))
                 for key, value in node.items()}
    if in_union and "const" in rewritten:
        rewritten["enum"] = [rewritten.pop("const")]
    return rewritten


def render(app: FastAPI) -> str:
    """The document as committed: sorted keys, two-space indent, final newline."""
    return json.dumps(openapi_schema(app), indent=2, sort_keys=True) + "\n"
