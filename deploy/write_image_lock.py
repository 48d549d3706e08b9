"""Write ``requirements/image.lock``: every distribution the container image installs, pinned.

pip resolves the project's dependencies and its ``dask-dashboard`` extra without installing
anything (``pip install --dry-run --report``). Environment markers depend on the exact
Python (redis needs ``async-timeout`` below Python 3.11.3), so run it in the image's base,
from the repository's root::

    podman run --rm -v "$PWD":/src -w /src python:3.11-slim \
        sh -c 'python -m venv /tmp/venv && /tmp/venv/bin/python deploy/write_image_lock.py'

(``docker run`` likewise). A lock resolved on an older 3.11 also serves a newer one: its
extra pins are installed but unused.

The Dockerfile installs the lock in a layer of its own, before the project's code is copied,
so a code change does not reinstall the dependencies. Rerun after changing a dependency in
``pyproject.toml`` (``tests/test_image_lock.py`` fails while the lock does not satisfy it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "image.lock"
EXTRAS = "dask-dashboard"
HEADER = f"""# Every distribution the container image installs besides LightTouch itself, pinned.
# Resolved in the image's base (Python {sys.version.split()[0]}) from pyproject.toml's
# dependencies and its [{EXTRAS}] extra by deploy/write_image_lock.py (its docstring has the
# command).
"""


def resolve() -> list[tuple[str, str]]:
    """(name, version) of each distribution pip would install, sorted by name."""
    report = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
         "--report", "-", f"{ROOT}[{EXTRAS}]"],
        check=True, capture_output=True, text=True).stdout
    installs = json.loads(report)["install"]
    pins = {(item["metadata"]["name"].lower(), item["metadata"]["version"])
            for item in installs if item["metadata"]["name"].lower() != "lighttouch"}
    return sorted(pins)


def main() -> None:
    LOCK.parent.mkdir(exist_ok=True)
    LOCK.write_text(HEADER + "".join(f"{name}=={version}\n" for name, version in resolve()))
    print(f"wrote {LOCK.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
