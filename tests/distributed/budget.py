"""Checks shared by the placement tests of the families read in partitions: a spec over the
per-job budget with no Dask scheduler, refused by every entry point that runs a job in this
machine's processes (the CLI's ``solve`` and ``validate``, ``lighttouch.solve``), and
``validate``'s account of a job it sends to the cluster, and a job within the budget solved as
it was before the budget was checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import lighttouch
from tests.local_stack import REPO
from worker import solve
from worker.errors import SpecError
from worker.pipeline.validate import summarize_spec
from worker.settings import child_environment


def refusals(spec: dict, root: Path, budget: int, monkeypatch: pytest.MonkeyPatch
             ) -> list[str]:
    """The refusal messages (whitespace collapsed) of ``spec``, whose data are under the data
    root ``root``, from ``lighttouch solve``, ``lighttouch validate`` and
    ``lighttouch.solve``, each with ``LIGHTTOUCH_MAX_JOB_BYTES`` at ``budget`` and no
    ``LIGHTTOUCH_DASK_SCHEDULER``; each must fail."""
    (root / "spec.json").write_text(json.dumps(spec))
    env = child_environment({"LIGHTTOUCH_MAX_JOB_BYTES": str(budget), "PYTHONPATH": str(REPO),
                             "LIGHTTOUCH_DATA_ROOTS": str(root)})
    env.pop("LIGHTTOUCH_DASK_SCHEDULER", None)
    messages = []
    for command in ("solve", "validate"):
        cli = subprocess.run([sys.executable, "-m", "service.cli", command,
                              str(root / "spec.json")], env=env, cwd=root,
                             capture_output=True, text=True, timeout=300)
        assert cli.returncode != 0, cli.stdout
        messages.append(" ".join(cli.stderr.split()))
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(budget))
    monkeypatch.delenv("LIGHTTOUCH_DASK_SCHEDULER", raising=False)
    with pytest.raises(SpecError) as refused:
        lighttouch.solve(spec)
    return [*messages, " ".join(str(refused.value).split())]


def assert_refused_without_a_scheduler(spec: dict, root: Path, budget: int,
                                       monkeypatch: pytest.MonkeyPatch, family: str) -> None:
    """Every entry point of :func:`refusals` refuses ``spec`` over ``budget``, naming the
    estimate, the budget, the missing scheduler and the partitioned ``family``."""
    for message in refusals(spec, root, budget, monkeypatch):
        assert "objective.data: the job would hold" in message
        assert f"{budget:,} bytes" in message and "no LIGHTTOUCH_DASK_SCHEDULER is set" in message
        assert family in message


def assert_validated_for_the_cluster(summary: dict, address: str, budget: int,
                                     algorithm: str = "svrg_ol") -> None:
    """``summary`` (``validate``'s) sends the job to the cluster at ``address`` with
    ``algorithm``: over ``budget`` in one process, under it on the driver, and two workers'
    estimates."""
    placement = summary["placement"]
    assert summary["algorithm"] == algorithm and placement["where"] == "cluster"
    assert placement["in_process_bytes"] > budget == placement["max_job_bytes"]
    assert placement["driver_bytes"] == summary["memory_estimate_bytes"] < budget
    assert len(placement["worker_bytes"]) == 2 and min(placement["worker_bytes"]) > 0
    assert address in placement["reason"]


def assert_within_the_budget_as_before(spec: dict, root: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``spec`` (data under ``root``) within a budget of 1 GB runs in this process, with the
    answer it has when no budget is checked."""
    before = solve(spec, roots=[root])
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(10**9))
    within = lighttouch.solve(spec)
    assert within.stats["placement"] == "in_process"
    assert "fits the per-job budget" in within.stats["placement_reason"]
    assert within.stats["in_process_bytes_estimate"] <= within.stats["max_job_bytes"]
    assert within.algorithm == before.algorithm != "svrg_ol"
    assert within.projected.solution == before.projected.solution
    assert [m.solution for m in within.mixture] == [m.solution for m in before.mixture]


def answer_past_the_budget(spec: dict, root: Path, address: str,
                           monkeypatch: pytest.MonkeyPatch, algorithm: str):
    """``spec`` with ``auto`` (data under ``root``, partitions of 4 MB) over a budget of
    100 MB: refused without a scheduler by every entry point, naming the budget; with the
    scheduler at ``address``, validated for the cluster with ``algorithm`` and solved there
    by ``lighttouch.solve``, whose Result is returned."""
    spec["solver"]["algorithm"] = "auto"
    budget = 100_000_000
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(root))
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", str(2**22))
    for message in refusals(spec, root, budget, monkeypatch):
        assert "LIGHTTOUCH_MAX_JOB_BYTES" in message and "no LIGHTTOUCH_DASK_SCHEDULER" in \
            message
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", address)
    assert_validated_for_the_cluster(summarize_spec(spec, roots=[root], max_job_bytes=budget),
                                     address, budget, algorithm)
    answer = lighttouch.solve(spec)
    assert answer.algorithm == algorithm and answer.stats["placement"] == "cluster"
    return answer
