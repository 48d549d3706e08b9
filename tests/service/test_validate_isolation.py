"""``POST /v1/validate`` reads data in a bounded child process: hostile data files are
refused naming their field while the API process itself does not grow."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from bench import hostile_files
from service.validation import summarize_bounded
from tests.local_stack import RedisServer, Stack
from tests.service.conftest import problem
from tests.service.stacks import api_stack
from worker.errors import SpecError

#: The stack's per-job memory budget.
BUDGET = 64 * 2**20
#: Growth of the API's resident memory the hostile requests may cause, at most.
MAX_GROWTH = 64 * 2**20


def data_uri(payload: bytes, media: str) -> str:
    return f"data:{media};base64,{base64.b64encode(payload).decode()}"


def learning_spec(features: dict, labels: list[float] | None = None) -> dict:
    data = {"features": features} if labels is None else {"features": features,
                                                           "labels": labels}
    return {"spec_version": 1,
            "objective": {"type": "empirical_risk", "loss": "hinge", "data": data},
            "solver": {"iterations": 100, "seed": 1}}


def resident_bytes(pid: int) -> int:
    """VmRSS of a process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) * 1024 for line in status.splitlines()
                if line.startswith("VmRSS:"))


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """The stack's data root, holding a 25 MB svmlight file of 4 million rows."""
    root = tmp_path_factory.mktemp("validate-isolation-data")
    (root / "rows.svm").write_bytes(hostile_files.svmlight_lines(2**22))
    return root


@pytest.fixture(scope="module")
def api(redis_server: RedisServer, tmp_path_factory, data_root: Path) -> Stack:
    with api_stack(redis_server, tmp_path_factory.mktemp("validate-isolation"), 7,
                   {"LIGHTTOUCH_MAX_JOB_BYTES": str(BUDGET),
                    "LIGHTTOUCH_DATA_ROOTS": str(data_root)}) as stack:
        yield stack


#: (case, spec, the field named, a phrase of the message)
HOSTILE = [
    ("npz of 1 GiB of zeros in a 1 MiB data: URI",
     learning_spec({"uri": data_uri(hostile_files.npz_bomb(2**27), "application/x-npz")},
                   [1.0]),
     "objective.data.features", "LIGHTTOUCH_MAX_JOB_BYTES"),
    ("npz of 32 MiB of zeros, under the budget, read in the child",
     learning_spec({"uri": data_uri(hostile_files.npz_bomb(2**22), "application/x-npz")},
                   [1.0]),
     "objective.data.features", "need a 2-D array"),
    ("svmlight feature index 2e9",
     learning_spec({"uri": data_uri(b"1 2000000000:1", "application/x-svmlight")}),
     "objective.data.features", "feature index 2,000,000,000"),
    ("npy header claiming 10^12 values",
     learning_spec({"uri": data_uri(hostile_files.npy_claiming((10**6, 10**6)),
                                    "application/x-npy")}, [1.0]),
     "objective.data.features", "truncated or forged"),
]


def test_hostile_data_is_refused_naming_its_field_and_the_api_does_not_grow(api: Stack,
                                                                           data_root: Path):
    valid = learning_spec({"uri": data_uri(b"1 1:0.5 3:1\n-1 2:1\n",
                                           "application/x-svmlight")})
    with api.client() as client:
        answer = client.post("/v1/validate", json=valid)  # starts the fork server
        assert answer.status_code == 200, answer.text
        assert answer.json()["sizes"] == {"parameters": 3, "constraints": 0, "examples": 2}
        before = resident_bytes(api.api.pid)
        rows = ("svmlight file of 4 million rows, over the budget",
                learning_spec({"uri": (data_root / "rows.svm").as_uri()}),
                "objective.data", "LIGHTTOUCH_MAX_JOB_BYTES")
        for case, spec, field, phrase in [*HOSTILE, rows]:
            body = problem(client.post("/v1/validate", json=spec), 422)
            assert body["errors"][0]["path"] == field, case
            assert phrase in body["errors"][0]["message"], (case, body)
        growth = resident_bytes(api.api.pid) - before
    assert growth < MAX_GROWTH, f"the API grew by {growth:,} bytes"


def test_a_validation_over_its_time_limit_is_stopped_and_refused(data_root: Path,
                                                                 monkeypatch):
    """Reading 4 million svmlight rows takes far longer than 0.2 s: the child is killed and
    the refusal names the limit."""
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(data_root))
    spec = learning_spec({"uri": (data_root / "rows.svm").as_uri()})
    with pytest.raises(SpecError, match=r"^objective: checking the data took longer than "
                                        r"0.2 s \(LIGHTTOUCH_VALIDATE_TIMEOUT_S\)"):
        summarize_bounded(spec, max_job_bytes=2**34, timeout_s=0.2, processes=1)
