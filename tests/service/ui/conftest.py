"""Fixtures of the dashboard tests: headless Chromium, pages that fail a test on any
unexpected console error, and screenshots under ``tests/artifacts/``; the stack is the
``service`` fixture the other service tests share."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from tests.local_stack import KEYS, Stack

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
INSTALL_HINT = ("install Debian's chromium package (apt-get install -y chromium) or point "
                "LIGHTTOUCH_TEST_CHROMIUM at a Chromium binary")


def chromium_path() -> str | None:
    """The Chromium binary the tests drive (``LIGHTTOUCH_TEST_CHROMIUM``, else ``chromium`` on
    PATH), or None if there is none."""
    candidate = os.environ.get("LIGHTTOUCH_TEST_CHROMIUM") or shutil.which("chromium")
    return candidate if candidate and Path(candidate).is_file() else None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module (the system's; Playwright downloads nothing)."""
    executable = chromium_path()
    if executable is None:
        pytest.skip(f"no Chromium found: {INSTALL_HINT}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


@dataclass
class Console:
    """Console errors and uncaught exceptions of a page; a test removes the ones it expects."""

    errors: list[str] = field(default_factory=list)

    def record(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def expect(self, pattern: str) -> None:
        """Drop the errors matching ``pattern`` (e.g. the 404 a test provokes); at least one."""
        expected = [text for text in self.errors if re.search(pattern, text)]
        assert expected, f"no console error matched {pattern!r}: {self.errors}"
        self.errors = [text for text in self.errors if text not in expected]


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(browser: Browser, service: Stack, console: Console) -> Iterator[Page]:
    """A fresh tab (its own sessionStorage) at 1280x800; no unexpected console error allowed."""
    context = browser.new_context(viewport={"width": 1280, "height": 800},
                                  base_url=service.url, accept_downloads=True)
    opened = context.new_page()
    opened.on("console", console.record)
    opened.on("pageerror", lambda error: console.errors.append(f"uncaught: {error}"))
    opened.set_default_timeout(30_000)
    yield opened
    context.close()
    assert console.errors == [], f"console errors: {console.errors}"


def sign_in(page: Page, tenant: str = "alpha") -> None:
    """Open the dashboard and sign in with ``tenant``'s key, by keyboard."""
    page.goto("/ui/")
    page.get_by_label("API key").fill(KEYS[tenant])
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Jobs").wait_for()


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as ``tests/artifacts/<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    return path
