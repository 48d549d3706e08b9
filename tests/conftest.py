"""Session rules for every test: with ``CI`` set, a skipped test fails the run.

A test may only skip for the platform it runs on (its reason starts with ``platform:``);
a skip for a missing file, tool or package would hide a broken install.
"""

from __future__ import annotations

import os

import pytest

PLATFORM_SKIP = "platform:"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turn a skip into a failure in CI unless it is a platform skip."""
    outcome = yield
    report = outcome.get_result()
    if not (os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail")):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if not reason.removeprefix("Skipped: ").startswith(PLATFORM_SKIP):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI ({reason}); install what the test needs instead"
