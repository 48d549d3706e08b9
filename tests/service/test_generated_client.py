"""A Python client generated from the committed OpenAPI document submits a job and reads its
result, as a user who generates a client would (openapi-python-client, a dev dependency)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from service.local_stack import KEYS, Stack, small_spec
from service.openapi import COMMITTED

#: The package openapi-python-client names after the document's title ("LightTouch").
PACKAGE = "light_touch_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> object:
    """The client package generated from ``openapi/openapi.json``, imported; any warning of
    the generator (a dropped endpoint or schema) fails the fixture."""
    tools = str(Path(sys.executable).parent)  # the generator formats its output with ruff
    generator = shutil.which("openapi-python-client", path=tools)
    assert generator, "openapi-python-client is missing: pip install -e '.[dev]'"
    out = tmp_path_factory.mktemp("generated") / "client"
    run = subprocess.run([generator, "generate", "--path", str(COMMITTED), "--output-path",
                          str(out), "--meta", "none"], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PATH": f"{tools}:{os.environ['PATH']}"})
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    assert "Warning" not in report and "Unable" not in report, report
    sys.path.insert(0, str(out.parent))
    try:
        yield importlib.import_module(out.name)
    finally:
        sys.path.remove(str(out.parent))


def test_every_operation_is_generated(generated):
    document = json.loads(COMMITTED.read_text(encoding="utf-8"))
    operations = {op["operationId"] for path in document["paths"].values()
                  for op in path.values()}
    modules = {module.stem for module in Path(generated.__file__).parent.glob("api/*/*.py")}
    assert operations <= modules


def test_the_generated_client_submits_a_job_and_reads_its_result(generated, service: Stack):
    api = importlib.import_module(f"{generated.__name__}.api.jobs")
    models = importlib.import_module(f"{generated.__name__}.models")
    for name in ("submit_job", "get_job", "get_result", "validate_spec"):
        importlib.import_module(f"{api.__name__}.{name}")
    client = generated.AuthenticatedClient(base_url=service.url, token=KEYS["alpha"])
    spec = models.Spec.from_dict(small_spec(iterations=2000))

    validated = api.validate_spec.sync(client=client, body=spec)
    assert validated.to_dict()["valid"] is True
    submitted = api.submit_job.sync(client=client, body=spec)
    assert isinstance(submitted, models.Submitted), submitted
    deadline = time.monotonic() + 300
    while (status := api.get_job.sync(submitted.id, client=client).status) not in (
            "succeeded", "failed", "cancelled") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status == "succeeded"
    result = api.get_result.sync(submitted.id, client=client)
    assert isinstance(result, models.Result), result
    assert len(result.mixture) >= 1 and result.expected.max_violation >= 0


def test_a_bad_field_comes_back_as_a_problem_with_its_path(generated, service: Stack):
    api = importlib.import_module(f"{generated.__name__}.api.jobs.submit_job")
    models = importlib.import_module(f"{generated.__name__}.models")
    client = generated.AuthenticatedClient(base_url=service.url, token=KEYS["alpha"])
    body = small_spec()
    body["constraints"] = [{"type": "ordering", "pairs": [[0, 9000]]}]
    answer = api.sync(client=client, body=models.Spec.from_dict(body))
    assert isinstance(answer, models.Problem)
    assert answer.status == 422
    assert [error.path for error in answer.errors] == ["constraints[0].pairs[0][1]"]
