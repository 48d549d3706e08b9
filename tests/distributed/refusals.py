"""A spec over the per-job budget with no Dask scheduler, refused by every entry point that
runs a job in this machine's processes: the CLI's ``solve`` and ``validate`` (child processes)
and ``lighttouch.solve``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import lighttouch
from tests.local_stack import REPO
from worker.errors import SpecError
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
