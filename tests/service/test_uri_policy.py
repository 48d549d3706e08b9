"""References the data policy refuses without reading them are refused when a job is
submitted or validated (422 naming the JSON path), not queued for a worker to refuse."""

from __future__ import annotations

import pytest

from tests.local_stack import Stack
from tests.service.conftest import problem
from worker.data.references import data_refs
from worker.spec.models import parse_spec


def spec_reading(features: object, *, groups: object = None) -> dict:
    """A hinge problem whose features (and a rate constraint's group) are ``features``."""
    data = {"features": features, "labels": [1.0, -1.0]}
    constraints = []
    if groups is not None:
        constraints = [{"type": "rate", "lhs": {"metric": "positive_prediction_rate",
                                                "group": "g"}, "op": "<=", "rhs": 0.5}]
        data["groups"] = {"g": groups}
    return {"dimension": 2, "objective": {"type": "empirical_risk", "loss": "hinge",
                                          "data": data}, "constraints": constraints}


REFUSED = [
    ("a file outside the data roots", spec_reading({"uri": "file:///etc/passwd",
                                                     "format": "csv"}),
     "objective.data.features", "outside the data roots"),
    ("a '..' segment", spec_reading({"uri": "file:///srv/../etc/x.npy"}),
     "objective.data.features", "'..' segment"),
    ("a host in a file URI", spec_reading({"uri": "file://server/x.npy"}),
     "objective.data.features", "names a host"),
    ("an unknown scheme", spec_reading({"uri": "ftp://example.org/x.npy"}),
     "objective.data.features", "scheme ftp:, which is not supported"),
    ("a data: URI that does not decode", spec_reading(
        {"uri": "data:application/x-npy;base64,not*base64"}),
     "objective.data.features", "cannot decode the data: URI"),
    ("a group vector outside the roots", spec_reading(
        [[1.0, 0.0], [0.0, 1.0]], groups={"uri": "file:///etc/group.npy"}),
     "objective.data.groups.g", "outside the data roots"),
]


@pytest.mark.parametrize(("case", "spec", "path", "words"), REFUSED, ids=[c[0] for c in REFUSED])
@pytest.mark.parametrize("route", ["/v1/jobs", "/v1/validate"])
def test_a_reference_the_policy_refuses_is_a_422_naming_its_path(idle_service: Stack, route,
                                                                  case, spec, path, words):
    with idle_service.client() as client:
        before = [job["id"] for job in client.get("/v1/jobs").json()["jobs"]]
        body = problem(client.post(route, json=spec), 422)
        after = [job["id"] for job in client.get("/v1/jobs").json()["jobs"]]
    assert [issue["path"] for issue in body["errors"]] == [path]
    assert words in body["errors"][0]["message"], body
    assert after == before, "a refused spec was queued"


def test_data_refs_finds_every_reference_with_its_json_path():
    spec = parse_spec({"dimension": 2, "objective": {"type": "max_of", "terms": [
        {"type": "empirical_risk", "loss": "hinge",
         "data": {"features": {"uri": "file:///data/a.npy"}, "labels": [1.0]}},
        {"type": "empirical_risk", "loss": "hinge",
         "data": {"features": [[1.0, 2.0]], "labels": {"uri": "file:///data/y.npy"}}}]},
        "bounds": {"upper": {"uri": "file:///data/u.npy"}}})
    assert [(path, ref.uri) for path, ref in data_refs(spec)] == [
        ("bounds.upper", "file:///data/u.npy"),
        ("objective.terms[0].data.features", "file:///data/a.npy"),
        ("objective.terms[1].data.labels", "file:///data/y.npy")]
