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

from service.openapi import COMMITTED
from tests.local_stack import KEYS, Stack, small_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
    spec = models.Spec.from_dict(small_spec(iterations=2000))
    with generated.AuthenticatedClient(base_url=service.url, token=KEYS["alpha"]) as client:
        result = _solved(api, models, client, spec)
    assert isinstance(result, models.Result), result
    assert len(result.mixture) >= 1 and result.expected.max_violation >= 0


def _solved(api, models, client, spec):
    """Validate, submit and follow a job with the generated functions; its Result."""
    validated = api.validate_spec.sync(client=client, body=spec)
    assert validated.to_dict()["valid"] is True
    submitted = api.submit_job.sync(client=client, body=spec)
    assert isinstance(submitted, models.Submitted), submitted
    deadline = time.monotonic() + 300
    while (status := api.get_job.sync(submitted.id, client=client).status) not in (
            "succeeded", "failed", "cancelled") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status == "succeeded"
    return api.get_result.sync(submitted.id, client=client)


def test_a_bad_field_comes_back_as_a_problem_with_its_path(generated, service: Stack):
    api = importlib.import_module(f"{generated.__name__}.api.jobs.submit_job")
    models = importlib.import_module(f"{generated.__name__}.models")
    body = small_spec()
    body["objective"] = {"type": "empirical_risk", "loss": "hinge", "classes": 3,
                         "data": {"features": [[1.0, 0.0, 0.0, 0.0]], "labels": [1.0]}}
    with generated.AuthenticatedClient(base_url=service.url, token=KEYS["alpha"]) as client:
        answer = api.sync(client=client, body=models.Spec.from_dict(body))
    assert isinstance(answer, models.Problem), answer
    assert answer.status == 422
    assert [error.path for error in answer.errors] == ["objective"]
    assert "softmax_cross_entropy" in answer.errors[0].message


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_the_generated_spec_model_reads_and_writes_every_example_unchanged(generated, example):
    models = importlib.import_module(f"{generated.__name__}.models")
    spec = json.loads(example.read_text(encoding="utf-8"))
    assert models.Spec.from_dict(spec).to_dict() == spec
