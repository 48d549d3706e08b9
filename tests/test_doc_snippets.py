"""The command-line snippets of the README and docs run as written, on a fresh checkout.

A fenced ``bash`` block preceded by ``<!-- cli-snippet -->`` (or ``<!-- cli-snippet: exit
N -->`` when its last command exits N on purpose) is run line by line as real processes, in
an empty folder beside the checkout's ``examples/`` and ``worker/``; ``.venv/bin/lighttouch``
and ``lighttouch`` both stand for this checkout's command. The marked snippets are counted
per file, so a snippet cannot leave the docs (or lose its marker) without this test saying
so, and the numbers the prose quotes from their output are checked against it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: ``<!-- cli-snippet[: exit N] -->``, then a fenced bash block.
SNIPPET = re.compile(r"<!-- cli-snippet(?::\s*exit (\d+))? -->\n```bash\n(.*?)```", re.S)

#: How many marked snippets each page holds.
PAGES = {"README.md": 1, "docs/tables.md": 1, "docs/results.md": 1}

#: Text the prose around a snippet quotes from its output.
QUOTED = {
    "README.md": ["exact_conic: feasible (tolerance 0.001), objective 0.590781", "0.576", "0.266"],
    "docs/tables.md": [],
    "docs/results.md": ["true_positive_rate(female)", "0.558[0.52,0.60]", "0.593[0.58,0.61]"],
}


def snippets(page: str) -> list[tuple[int, list[str]]]:
    """(expected exit code of the last command, commands) of each marked snippet."""
    found = []
    for match in SNIPPET.finditer((ROOT / page).read_text(encoding="utf-8")):
        text = match.group(2).replace("\\\n", " ")
        found.append((int(match.group(1) or 0), [line for line in text.splitlines() if line]))
    return found


def test_every_marked_snippet_is_counted():
    pages = {str(path.relative_to(ROOT)) for path in [ROOT / "README.md",
                                                         *ROOT.glob("docs/*.md")]
             if snippets(str(path.relative_to(ROOT)))}
    assert pages == set(PAGES)
    assert {page: len(snippets(page)) for page in PAGES} == PAGES


@pytest.mark.parametrize("page", sorted(PAGES))
def test_snippets_run_as_written(page, tmp_path):
    for name in ("examples", "worker"):
        (tmp_path / name).symlink_to(ROOT / name)
    output = ""
    for last_exit, commands in snippets(page):
        for i, command in enumerate(commands):
            program, *args = shlex.split(command)
            assert program in ("lighttouch", ".venv/bin/lighttouch"), command
            done = subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=300, check=False,
                                  env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
            expected = last_exit if i == len(commands) - 1 else 0
            assert done.returncode == expected, f"{command}\n{done.stderr}"
            assert "Traceback" not in done.stderr
            output += done.stdout + done.stderr
    for words in QUOTED[page]:
        assert words in output, (page, words)
