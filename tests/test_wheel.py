"""What ships is what is tested: the wheel built from the tracked files (as the image builds
it) holds every file the dashboard serves and every data file, and an unpacked copy of it
serves each of the dashboard's files under ``/ui/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.local_stack import REPO

pytestmark = pytest.mark.slow   # the build takes about 5 s, serving the files 4 s

#: What the image's wheel stage copies (Dockerfile) and the folders of package data.
SOURCES = ("pyproject.toml", "README.md", "worker", "service", "lighttouch")
PACKAGE_DATA = ("service/ui/static", "worker/datasets/uci_adult")
STATIC = "service/ui/static"

SERVE_EVERY_FILE = """
import json, sys
from starlette.testclient import TestClient
import service
from service.app import create_app
from service.settings import ServiceSettings
client = TestClient(create_app(ServiceSettings()))
paths = json.loads(sys.argv[1])
print(json.dumps({"package": service.__file__,
                  "status": {path: client.get("/ui/" + path).status_code for path in paths}}))
"""


def tracked(*paths: str) -> list[str]:
    """The git-tracked files under ``paths``, relative to the repository."""
    listed = subprocess.run(["git", "ls-files", "--", *paths], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout
    return listed.split()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel ``pip wheel --no-deps`` builds from a copy of the tracked sources (in an
    isolated build environment, as the image's wheel stage does)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    for name in tracked(*SOURCES):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                            "--wheel-dir", str(root / "dist"), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = (root / "dist").glob("lighttouch-*.whl")
    return path


def test_the_wheel_holds_every_tracked_file_of_the_dashboard_and_the_datasets(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = tracked(*PACKAGE_DATA)
    assert f"{STATIC}/vendor/uplot/uPlot.esm.js" in expected
    assert [name for name in expected if name not in names] == []


def test_an_unpacked_wheel_serves_every_file_of_the_dashboard(wheel: Path, tmp_path: Path):
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path / "site")
    served = [name.removeprefix(f"{STATIC}/") for name in tracked(STATIC)]
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run([sys.executable, "-c", SERVE_EVERY_FILE, json.dumps(served)],
                          cwd=tmp_path, env=environment, check=True, capture_output=True,
                          text=True)
    answer = json.loads(done.stdout)
    assert Path(answer["package"]).is_relative_to(tmp_path / "site")
    assert {path: status for path, status in answer["status"].items() if status != 200} == {}
