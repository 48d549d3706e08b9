"""No measured figure in the code's docstrings and comments (docs/architecture.md#measured-figures):
timings, speed ratios, shares of a run's time, excesses over an optimum and test
errors observed in a run belong on the docs page of their topic, where they are dated by
their run; the code states the rule and points there ("measured: docs/page.md#section").
Constants' meanings and units, paper references and algorithm numbers stay in the code.
``bench/`` is not scanned: its scripts are what measures."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("worker", "service", "lighttouch")
_NUMBER = r"\d[\d.,]*(?:-\d[\d.,]*)?"
#: What a measured figure looks like, by kind.
MEASURED = {
    "a sub-second timing": re.compile(r"\d\s*(?:ms|µs|us|ns)\b"),
    "seconds compared": re.compile(r"\d\s*s\s+(?:against|instead\s+of|vs\b|where\b)"),
    "seconds a run took": re.compile(
        rf"\b(?:took|takes|ran\s+for|in)\s+(?:about\s+|~)?{_NUMBER}\s*(?:s|seconds|minutes)\b"),
    "a share of a timing": re.compile(r"\d\s*(?:s|seconds)\s+of\s+(?:a|an|the|its)\b"),
    "fractional seconds": re.compile(r"\d\.\d+\s*s\b"),
    "a speed ratio": re.compile(
        r"\d\s*[x×]\s+(?:faster|slower|sooner|closer|less\b|more\b|[\w-]+'s\s+time)"),
    "a share of the time": re.compile(
        r"\d%\s+of\s+(?:its|the|a|an|their)\s+(?:[\w-]+\s+)?(?:time|run|solve)\b"),
    "a distance from an optimum": re.compile(
        r"(?<![\w.])\+\d[\d.]*%|\d\.\d+%\s+(?:below|above|of\s+(?:its|the)\s+(?:exact\s+)?optimum)"),
    "a test error": re.compile(r"\d\.\d+%\s+(?:test\s+)?error|\d\.\d+\s+points?\s+(?:above|below)"),
    "a timed run": re.compile(r"\d-second\s+(?:run|solve)"),
    "a run's length": re.compile(
        r"\bran\s+to\s+(?:iteration\s+)?\d{1,3}(?:,\d{3})+"
        r"|\d{1,3}(?:,\d{3})+\s+iterations,?\s+(?:in\s+)?\d[\d.]*\s*s\b"),
    "measured memory": re.compile(r"\d\s*[GM]B\b"),
}
#: (module, text it may carry) -> why that text is no measured figure. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    ("worker/queue/connection.py", "0.1 + 0.2 + ... + 1.6 s"):
        "the retry delays the backoff constants give, not a measurement",
}


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def prose(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of every docstring and string statement (attribute docstrings
    included) and of every run of comments on consecutive lines, whitespace folded so that a
    figure wrapped over two lines is one phrase."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            yield node.lineno, " ".join(node.value.value.split())
    block: list[str] = []
    start = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        if block and line != last + 1:
            yield start, " ".join(" ".join(block).split())
            block = []
        if not block:
            start = line
        block.append(token.string.lstrip("#:"))
        last = line
    if block:
        yield start, " ".join(" ".join(block).split())


def measured_figures(path: Path) -> list[str]:
    """``line: kind: "figure"`` for every measured figure of ``path``'s prose that
    :data:`ALLOWED` does not excuse."""
    name = str(path.relative_to(ROOT))
    found = []
    for line, text in prose(path.read_text(encoding="utf-8")):
        for kind, pattern in MEASURED.items():
            for match in pattern.finditer(text):
                if not any(module == name and allowed in text and match.group(0) in allowed
                           for module, allowed in ALLOWED):
                    phrase = text[max(match.start() - 30, 0):match.end() + 10]
                    found.append(f"{line}: {kind}: {phrase!r}")
    return found


def test_the_scan_sees_every_package():
    assert {path.relative_to(ROOT).parts[0] for path in _modules()} == set(PACKAGES)


def test_the_patterns_catch_the_figures_they_name():
    caught = {kind for kind, pattern in MEASURED.items() for text in (
        "at 20,000 x 50: 11 ms against 23 ms", "took 90-100 ms", "(0.34 s against 0.20 s)",
        "keeping none gave 1.07% below in 1.8 s", "took 30 s of a 5 s time limit",
        "was 5-120x faster than the games", "took 1.4-1.7x Clarabel's time",
        "in 60% of its time", "the answer ended +0.24% above", "tested at 3.18% error",
        "a report once took 55% of a 10-second run", "a scan takes 0.19 s for six files",
        "bounds the optimum 0.83% below", "3.2 points above its error",
        "ran to 32,768", "over 131,072 iterations, 12 s", "rose 7.6 GB over its start")
        if pattern.search(text)}
    assert caught == set(MEASURED)
    rules = ("raises gamma at most 4x higher", "retries for about 43 s in all",
             "``time_limit_s`` seconds", "the 95% bootstrap interval", "the client's 5 s timeout",
             "holds out 20% of the training rows", "well under 20% test error",
             "64 MiB of float64", "files over 2 GiB", "stages ending before 16,384 iterations")
    assert not [text for text in rules for pattern in MEASURED.values() if pattern.search(text)]


def test_every_allowance_is_still_needed():
    for (module, text), reason in ALLOWED.items():
        found = " ".join(phrase for _, phrase in prose((ROOT / module).read_text(encoding="utf-8")))
        assert reason and text in found, f"{module} no longer says {text!r}: drop it from ALLOWED"


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_measured_figure_in_docstrings_or_comments(path: Path):
    found = measured_figures(path)
    assert not found, (
        f"{path.relative_to(ROOT)} carries measured figures: {found}. Put each on the docs "
        "page of its topic (docs/benchmarks.md, docs/method-choice.md, docs/stopping-rules.md, "
        "docs/algorithms.md, docs/guarantees.md, ...) and point there: "
        "\"(measured: docs/page.md#section)\"")
