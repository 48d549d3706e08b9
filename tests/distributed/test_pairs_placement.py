"""pairwise_hinge tables join the partitioned families (worker.distributed.placement): past
LIGHTTOUCH_MAX_JOB_BYTES, auto runs them on the Dask cluster at LIGHTTOUCH_DASK_SCHEDULER
with the answer of the spec that asks for solver.workers, or refuses them without one (in the
CLI and lighttouch.solve); within it they keep the in-memory path; the estimate, from the
tables' headers alone, bounds the compiled problem's."""

from __future__ import annotations

import copy

import pytest

import lighttouch
from tests.data.helpers import isolated_data_cache
from tests.distributed.budget import (
    assert_validated_for_the_cluster,
    assert_within_the_budget_as_before,
    refusals,
)
from tests.distributed.test_pairs import pair_spec
from worker import solve
from worker.distributed.pairs import pair_sizes, plan_pairs
from worker.errors import SpecError
from worker.pipeline.memory import memory_parts, planned_parts
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource, compile_problem
from worker.settings import DataSettings
from worker.spec.models import parse_spec

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

#: Over the in-process estimate of :func:`auto_pairs`' 6,000 pairs (about 6.4 MB), under the
#: driver's on the cluster.
BUDGET = 4_000_000


def auto_pairs(directory, file_format: str = "parquet", iterations: int = 4000) -> dict:
    """6,000 lattice pairs as tables under ``directory``, solved by auto with no
    ``solver.workers`` (partitions of 1,500 rows when they are cut)."""
    spec = pair_spec(directory, file_format, 6000, workers=None, iterations=iterations)
    spec["solver"].update(algorithm="auto", svrg={"partition_rows": 1500})
    return spec


@pytest.fixture
def roots(tmp_path, monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    monkeypatch.delenv("LIGHTTOUCH_DASK_SCHEDULER", raising=False)
    return tmp_path


def test_over_the_budget_auto_runs_the_pairs_on_the_cluster_as_solver_workers_does(
        roots, cluster, monkeypatch):
    spec = auto_pairs(roots)
    asked = copy.deepcopy(spec)
    asked["solver"]["workers"] = 2
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    explicit = solve(asked, roots=[roots])
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(BUDGET))
    summary = summarize_spec(spec, max_job_bytes=BUDGET)
    routed = lighttouch.solve(spec)
    placement = summary["placement"]
    assert_validated_for_the_cluster(summary, cluster.scheduler_address, BUDGET)
    stats = routed.stats
    assert routed.algorithm == stats["method"] == explicit.algorithm == "svrg_ol"
    assert stats["placement"] == "cluster" and stats["batch_workers"] == 2
    assert stats["partitions"] == explicit.stats["partitions"] > 1
    assert stats["in_process_bytes_estimate"] == placement["in_process_bytes"]
    assert "exceeds the per-job budget" in stats["method_reason"]
    assert "LIGHTTOUCH_DASK_SCHEDULER" in stats["method_reason"]
    assert routed.projected.solution == explicit.projected.solution
    assert [m.solution for m in routed.mixture] == [m.solution for m in explicit.mixture]


def assert_names_the_way_out(message: str) -> None:
    assert "objective.data: the job would hold" in message and "in-process estimate" in message
    assert f"{BUDGET:,} bytes" in message and "LIGHTTOUCH_MAX_JOB_BYTES" in message
    assert "no LIGHTTOUCH_DASK_SCHEDULER is set" in message
    assert "auto (or solver.workers) on pairwise_hinge tables in npy or parquet files" \
        in message


def test_over_the_budget_without_a_scheduler_the_cli_and_the_api_refuse(roots, monkeypatch):
    for message in refusals(auto_pairs(roots, "npy"), roots, BUDGET, monkeypatch):
        assert_names_the_way_out(message)
    named = auto_pairs(roots)
    named["solver"]["algorithm"] = "lighttouch"
    with pytest.raises(SpecError, match="solver.algorithm lighttouch reads every example"):
        lighttouch.solve(named)


def test_within_the_budget_the_pairs_stay_in_process_unchanged(roots, monkeypatch):
    assert_within_the_budget_as_before(auto_pairs(roots, iterations=2000), roots, monkeypatch)


@pytest.mark.parametrize("file_format", ["npy", "parquet"])
def test_the_header_estimate_bounds_the_compiled_problem(tmp_path, file_format):
    model = parse_spec(auto_pairs(tmp_path, file_format))
    plan = plan_pairs(model, [tmp_path], 1500, DataSettings())
    sizes = pair_sizes(plan)
    widest = max(stop - start for start, stop in plan.ranges)
    assert (sizes.n, sizes.entries, sizes.partition_entries) == (6000, 6000 * 8, widest * 8)
    problem = compile_problem(model, DataSource([tmp_path], DataSettings()))
    compiled = sum(memory_parts(problem, model.solver.candidates).values())
    header = sum(planned_parts(model, sizes.n, sizes.entries).values())
    assert compiled <= header <= 2 * compiled
