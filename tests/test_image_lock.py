"""``requirements/image.lock`` (what the container image installs) satisfies pyproject.toml."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.local_stack import REPO


def pins() -> dict[str, str]:
    lines = (REPO / "requirements" / "image.lock").read_text().splitlines()
    pairs = [line.split("==") for line in lines if line and not line.startswith("#")]
    assert all(len(pair) == 2 for pair in pairs), "every line of the lock is name==version"
    return {canonicalize_name(name): version for name, version in pairs}


def test_the_image_lock_pins_every_dependency_within_its_range():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["dask-dashboard"]
    locked = pins()
    for text in wanted:
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in requirements/image.lock; rerun " \
                               "python deploy/write_image_lock.py"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"the lock has {name}=={locked[name]}, outside {requirement.specifier}; rerun "
            "python deploy/write_image_lock.py")
    assert "bokeh" in locked, "the Dask dashboard needs bokeh in the image"
