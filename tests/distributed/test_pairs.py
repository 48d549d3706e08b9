"""pairwise_hinge's tables read in row-aligned partitions and solved by the LightTouch
family's rounds: the partitions against the tables, the same bits in this process and on
real Dask LocalClusters of one and two worker processes, the answer against the in-memory
path and the exact optimum (CVXPY), the certified lower bound read from the partitions, and
bad input named by table, global row and file."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.data.helpers import isolated_data_cache
from tests.specs import exact_optimum
from worker import solve
from worker.candidates.lower_bound import widened_lower_bound
from worker.datasets.lattice import make_ranking_problem
from worker.distributed.pairs import pair_part, plan_pairs, runs_partitioned
from worker.errors import DataError, SpecError
from worker.problem.compile import DataSource, compile_problem
from worker.settings import DataSettings, data_settings
from worker.spec.models import parse_spec

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

DIMS = 3


def tables(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A small lattice ranking problem's Phi(x+) and Phi(x-), dense (n, 2^DIMS)."""
    positive, negative, _ = make_ranking_problem(n, DIMS, 0.1, seed)
    return positive.toarray(), negative.toarray()


def write(directory, name: str, values: np.ndarray, file_format: str,
          group_rows: int = 100) -> dict:
    """``values`` as ``name``.npy or .parquet (row groups of ``group_rows``); its reference."""
    path = directory / f"{name}.{file_format}"
    if file_format == "npy":
        np.save(path, values)
    else:
        columns = {f"v{j}": values[:, j] for j in range(values.shape[1])}
        pq.write_table(pa.table(columns), path, row_group_size=group_rows)
    return {"uri": path.as_uri(), "format": file_format}


def pair_spec(directory, file_format: str = "parquet", n: int = 1200, *,
              workers: int | None = 0, iterations: int | str = 30_000,
              positive: np.ndarray | None = None, negative: np.ndarray | None = None) -> dict:
    """A lattice spec on tables written under ``directory`` (the negative table's row groups
    differ from the positive's, so alignment is by rows)."""
    if positive is None:
        positive, negative = tables(n)
    data = {"positive": write(directory, "positive", positive, file_format, 97),
            "negative": write(directory, "negative", negative, file_format, 130)}
    solver = {"algorithm": "lighttouch", "iterations": iterations, "seed": 5,
              "svrg": {"partition_rows": 250}}
    if workers is not None:
        solver["workers"] = workers
    return {"spec_version": 1, "dimension": 2**DIMS, "bounds": {"lower": -10, "upper": 10},
            "objective": {"type": "empirical_risk", "loss": "pairwise_hinge", "data": data},
            "constraints": [{"type": "monotone_lattice", "shape": [2] * DIMS,
                             "increasing": list(range(DIMS))}],
            "solver": solver}


@pytest.mark.parametrize("file_format", ["npy", "parquet"])
def test_partitions_are_the_row_aligned_differences(tmp_path, file_format):
    positive, negative = tables(1000)
    model = parse_spec(pair_spec(tmp_path, file_format, positive=positive, negative=negative))
    plan = plan_pairs(model, [tmp_path], 250, DataSettings())
    assert len(plan.ranges) > 2 and plan.n == 1000
    parts = [pair_part(plan, k, DataSettings()) for k in range(len(plan.ranges))]
    assert [int(p.rows.first_row) for p in parts] == [start for start, _ in plan.ranges]
    assert {p.width for p in parts} == {2**DIMS}
    rows = np.vstack([np.asarray(dense(p.rows, 2**DIMS)) for p in parts])
    np.testing.assert_array_equal(rows, positive - negative)
    assert all(np.all(p.rows.labels == 1) for p in parts)


def dense(rows, width: int) -> np.ndarray:
    out = np.zeros((rows.labels.shape[0], width))
    for r in range(out.shape[0]):
        span = slice(rows.indptr[r], rows.indptr[r + 1])
        out[r, rows.indices[span]] = rows.data[span]
    return out


def same_answer(first, second) -> None:
    assert first.projected.solution == second.projected.solution
    assert [m.solution for m in first.mixture] == [m.solution for m in second.mixture]
    assert first.mean.objective == second.mean.objective


def test_same_bits_in_process_on_one_and_on_two_workers(tmp_path):
    """A fixed iteration count: workers 0, 1 and 2 (each solve starts its LocalCluster)."""
    answers = {w: solve(pair_spec(tmp_path, workers=w), roots=[tmp_path]) for w in (0, 1, 2)}
    same_answer(answers[0], answers[1])
    same_answer(answers[0], answers[2])
    assert answers[0].stats["method"] == "lighttouch"
    assert answers[0].stats["partitions"] > 2 and answers[0].stats["bytes_moved"] == 0
    assert answers[2].stats["bytes_moved"] > 0
    assert answers[2].stats["communication_rounds"] == answers[0].stats["communication_rounds"]


def test_partitioned_answer_against_in_memory_and_the_exact_optimum(tmp_path):
    positive, negative = tables(3000, seed=1)
    spec = pair_spec(tmp_path, "npy", positive=positive, negative=negative,
                     iterations=200_000)
    partitioned = solve(spec, roots=[tmp_path])
    in_memory = solve(spec | {"solver": spec["solver"] | {"workers": None}},
                      roots=[tmp_path])
    assert "communication_rounds" not in in_memory.stats
    inline = spec | {"objective": spec["objective"] | {"data": {
        "positive": positive.tolist(), "negative": negative.tolist()}}}
    optimum, _ = exact_optimum(inline)
    for result in (partitioned, in_memory):
        assert result.feasibility.feasible
        assert result.projected.max_violation <= 1e-6
        assert result.projected.objective >= optimum - 1e-6
        assert result.projected.objective <= optimum * 1.02
    assert abs(partitioned.projected.objective - in_memory.projected.objective) \
        <= 0.02 * optimum


def test_the_bound_on_partitions_is_the_in_memory_bound_at_the_same_point(tmp_path):
    """The certified lower bound reads the pairs' margins and band rows from the
    partitions (here two Dask workers): the same bound as from rows in memory."""
    positive, negative = tables(1500, seed=2)
    spec = pair_spec(tmp_path, "npy", positive=positive, negative=negative, workers=2)
    result = solve(spec, roots=[tmp_path])
    point, objective = np.array(result.projected.solution), result.projected.objective
    model = parse_spec(spec | {"solver": spec["solver"] | {"workers": None}})
    problem = compile_problem(model, DataSource([tmp_path], data_settings()))
    in_memory = widened_lower_bound(problem, point, objective, 60.0)
    assert result.stats["lower_bound"] == pytest.approx(in_memory.value, rel=1e-9, abs=1e-12)
    inline = spec | {"objective": spec["objective"] | {"data": {
        "positive": positive.tolist(), "negative": negative.tolist()}}}
    optimum, _ = exact_optimum(inline)
    assert result.stats["lower_bound"] <= optimum + 1e-7 <= objective + 2e-7


def test_svrg_ol_runs_on_the_same_partitions(tmp_path):
    """SVRG OL's batch phases and serial examples come from the pairs' partitions too."""
    positive, negative = tables(1500, seed=3)
    spec = pair_spec(tmp_path, "npy", positive=positive, negative=negative,
                     iterations=50_000)
    spec["solver"]["algorithm"] = "svrg_ol"
    result = solve(spec, roots=[tmp_path])
    assert result.stats["method"] == "svrg_ol" and result.stats["communication_rounds"] > 2
    inline = spec | {"objective": spec["objective"] | {"data": {
        "positive": positive.tolist(), "negative": negative.tolist()}}}
    optimum, _ = exact_optimum(inline)
    assert result.feasibility.feasible
    assert optimum - 1e-6 <= result.projected.objective <= optimum * 1.05


@pytest.mark.parametrize("algorithm", ["auto", "lighttouch"])
def test_open_ended_runs_stop_on_their_rule(tmp_path, algorithm):
    """``auto`` picks SVRG OL on partitioned pairs; LightTouch's rounds stop on the
    estimate from the partitions' objective values, or at the time limit."""
    spec = pair_spec(tmp_path, "npy", iterations="auto")
    spec["solver"].update(algorithm=algorithm, time_limit_s=60)
    result = solve(spec, roots=[tmp_path])
    assert result.stats["method"] == ("svrg_ol" if algorithm == "auto" else algorithm)
    if algorithm == "auto":
        assert "solver.workers" in result.stats["method_reason"]
    else:
        assert result.stats["stopped_by"] in ("converged", "time_limit")
    assert result.feasibility.feasible


def test_a_nan_names_its_table_global_row_column_and_file(tmp_path):
    positive, negative = tables(1000)
    negative[777, 3] = np.nan
    with pytest.raises(DataError) as raised:
        solve(pair_spec(tmp_path, "parquet", positive=positive, negative=negative),
              roots=[tmp_path])
    assert raised.value.path == "objective.data.negative"
    assert "row 777 column 3" in raised.value.message
    assert "negative.parquet" in raised.value.message


def test_tables_of_different_rows_or_widths_are_refused(tmp_path):
    positive, negative = tables(600)
    with pytest.raises(SpecError, match="599 rows for 600 rows"):
        solve(pair_spec(tmp_path, "npy", positive=positive, negative=negative[:-1]),
              roots=[tmp_path])
    wider = np.hstack([negative, np.zeros((600, 1))])
    with pytest.raises(DataError, match="9 columns and objective.data.positive's 8"):
        solve(pair_spec(tmp_path, "npy", positive=positive, negative=wider),
              roots=[tmp_path])


def test_workers_is_refused_where_the_pairs_cannot_be_partitioned(tmp_path):
    spec = pair_spec(tmp_path, "npy", n=300)
    positive, negative = tables(300)
    inline = spec | {"objective": spec["objective"] | {"data": {
        "positive": positive.tolist(), "negative": negative.tolist()}}}
    assert runs_partitioned(parse_spec(spec)) and not runs_partitioned(parse_spec(inline))
    with pytest.raises(SpecError) as raised:
        solve(inline, roots=[tmp_path])
    assert raised.value.issues[0][0] == "solver.workers"
