"""docs/rates.md runs as written: its Python blocks, in order, in one namespace."""

from __future__ import annotations

from pathlib import Path

from tests.lighttouch.test_python_doc import python_blocks

DOC = Path(__file__).resolve().parents[2] / "docs" / "rates.md"


def test_every_python_block_of_the_rates_page_runs(capsys):
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) == 2
    namespace: dict = {"__name__": "rates_doc"}
    for number, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
    assert namespace["model"].result_.feasibility.feasible
    assert namespace["bounded"].result_.feasibility.feasible
    out = capsys.readouterr().out
    assert out.count("feasible=True") == 2 and "exact_conic" in out
