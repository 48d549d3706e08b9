"""docs/rates.md runs as written: its Python blocks, in order, in one namespace."""

from __future__ import annotations

from pathlib import Path

from tests.lighttouch.test_python_doc import python_blocks

DOC = Path(__file__).resolve().parents[2] / "docs" / "rates.md"


def test_every_python_block_of_the_rates_page_runs(capsys):
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    # a fairlearn criterion; Neyman-Pearson, a rate objective; a bounded group loss
    assert len(blocks) == 3
    namespace: dict = {"__name__": "rates_doc"}
    fitted = ("model", "model", "bounded")
    for number, (block, name) in enumerate(zip(blocks, fitted, strict=True)):
        exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
        assert namespace[name].result_.feasibility.feasible
        assert "feasible=True" in capsys.readouterr().out
        if number == 1:
            assert namespace["model"].objective == "false_positive_rate"
    assert namespace["bounded"].result_.stats["method"] == "exact_conic"
