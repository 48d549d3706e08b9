"""worker.stats: stage records become the Result's stats entries, merged once."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from worker.data.read import LoadStats
from worker.distributed.batch import BatchStats
from worker.pipeline.solve import PartitionStats, solve
from worker.stats import Stats, merged, stat


@dataclass(frozen=True)
class Inner(Stats):
    seconds: float = stat("inner_s")


@dataclass(frozen=True)
class Outer(Stats):
    count: int
    missing: float | None
    inner: Inner
    extra: dict


def test_fields_become_entries_renamed_nested_and_without_nones():
    record = Outer(3, None, Inner(0.5), {"note": "x"})
    assert record.as_stats() == {"count": 3, "inner_s": 0.5, "note": "x"}
    assert list(record.as_stats()) == ["count", "inner_s", "note"]


def test_a_key_two_stages_write_is_refused():
    with pytest.raises(ValueError, match="'count' is written by two stages"):
        merged(Outer(1, None, Inner(0.1), {}), Outer(2, None, Inner(0.2), {}))


def test_communication_adds_up_across_stages_and_stays_in_its_first_place():
    batch = BatchStats(4, 100, 40, 0.5, 2)
    values = PartitionStats(3, 2, 30)
    stats = merged(batch, None, values, LoadStats(references=1))
    assert stats["communication_rounds"] == 6 and stats["bytes_moved"] == 130
    assert list(stats)[:2] == ["communication_rounds", "bytes_moved"]
    assert stats["partitions"] == 3 and stats["data_references"] == 1


def test_summed_only_when_every_stage_says_so():
    with pytest.raises(ValueError, match="bytes_moved"):
        merged(BatchStats(1, 10, 1, 0.1, 0), Outer(0, None, Inner(0.0), {"bytes_moved": 5}))


def test_a_solve_merges_every_stage_once():
    spec = {"dimension": 2, "objective": {"type": "quadratic", "Q": [[1.0, 0.0], [0.0, 1.0]],
                                          "c": [-1.0, 1.0]},
            "bounds": {"lower": -1.0, "upper": 1.0},
            "constraints": [{"type": "ordering", "pairs": [[0, 1]]}],
            "solver": {"algorithm": "lighttouch", "iterations": 500}}
    stats = solve(spec, roots=[]).stats
    stages = [("iterations", "solve_s", "method"), ("lp_s", "candidates"),
              ("projection_s",), ("load_s",), ("data_references",), ("wall_s",)]
    order = list(stats)
    positions = [[order.index(key) for key in keys] for keys in stages]
    assert positions == sorted(positions)           # the stages' entries in stage order
