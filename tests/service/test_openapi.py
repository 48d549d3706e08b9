"""The committed ``openapi/openapi.json`` is what the app generates (rerun the generator)."""

from __future__ import annotations

from service.app import create_app
from service.openapi import COMMITTED, render
from service.settings import ServiceSettings


def test_the_committed_openapi_document_is_current():
    current = render(create_app(ServiceSettings()))
    assert COMMITTED.read_text(encoding="utf-8") == current, (
        "openapi/openapi.json is stale: run 'python -m service.write_openapi' and commit it")


def test_the_spec_body_and_problem_schemas_are_documented():
    document = create_app(ServiceSettings()).openapi()
    submit = document["paths"]["/v1/jobs"]["post"]
    body = submit["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/Spec"}
    assert {"Spec", "Problem", "Result", "Solver"} <= set(document["components"]["schemas"])
    assert set(submit["responses"]) == {"202", "401", "409", "413", "415", "422", "429",
                                       "503"}
    assert "application/problem+json" in submit["responses"]["422"]["content"]
