"""Property-based run of the committed OpenAPI document against the live API: no 5xx,
responses (status, content type, headers, body) as documented.

``/readyz`` is left out: on this worker-less stack its documented answer is a 503
(see ``test_health.py``).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.openapi import COMMITTED
from tests.local_stack import KEYS, Stack

schema = schemathesis.openapi.from_path(COMMITTED).exclude(path="/readyz")
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def api(idle_service: Stack) -> Stack:
    """The worker-less stack: submitted jobs stay queued, the tenant cap is reached quickly
    (the ``fuzz`` tenant's, which only this file uses)."""
    return idle_service


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_honours_its_openapi_document(api: Stack, case):
    case.call_and_validate(base_url=api.url, checks=CHECKS,
                           headers={"Authorization": f"Bearer {KEYS['fuzz']}"})
