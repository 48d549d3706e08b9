"""docs/python.md runs as written: its Python blocks, in order, in one namespace, with the
service part against this directory's stack of real API and worker processes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.local_stack import KEYS

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text."""
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


@pytest.mark.slow
def test_every_python_block_of_the_python_page_runs(stack, monkeypatch, capsys):
    monkeypatch.setenv("LIGHTTOUCH_URL", stack.url)
    monkeypatch.setenv("LIGHTTOUCH_API_KEY", KEYS["alpha"])
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    namespace: dict = {"__name__": "python_doc"}
    for number, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "service test" in printed and "succeeded" in printed
