"""Small modules and short functions (docs/architecture.md, "Size"): no module of the product,
its tests or its benchmarks over 400 lines, and no function over 60 lines outside the numba
kernels of ``worker/kernels`` (whose loops stay whole so they compile as one)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("worker", "service", "lighttouch", "bench", "tests")
MODULE_LINES = 400
FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _long_functions(path: Path) -> list[str]:
    """``name: lines`` of every function of ``path`` over :data:`FUNCTION_LINES` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{node.name}: {node.end_lineno - node.lineno + 1}"
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > FUNCTION_LINES]


def test_the_scan_sees_every_package():
    assert {path.relative_to(ROOT).parts[0] for path in _modules()} == set(PACKAGES)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_module_and_function_sizes(path: Path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MODULE_LINES, f"{path.relative_to(ROOT)}: {lines} lines; split it"
    if "kernels" not in path.relative_to(ROOT).parts:
        assert not _long_functions(path), (
            f"{path.relative_to(ROOT)}: functions over {FUNCTION_LINES} lines: "
            f"{_long_functions(path)}")
