"""Example weights on examples read in partitions (worker.distributed.weights): the same bits
on a LocalCluster as in this process, the in-memory answer and CVXPY's (Clarabel's) weighted
optimum, integer weights valued as repeated rows, the placement past the budget, and the
errors that name the field, the row and the file."""

from __future__ import annotations

import copy
import hashlib
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lighttouch
from tests.algorithms.test_registry import TOLERANCE
from tests.algorithms.test_weighted_objective import repeated, weighted
from tests.distributed.test_distributed import _written, assert_same_result
from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.distributed.batch import open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_partitions
from worker.errors import DataError, SpecError
from worker.kernels.objective import objective_value
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec


def weights_file(spec: dict, directory: Path, values=None, name: str = "w.npy") -> dict:
    """``spec`` with its weights (or ``values``) moved into a .npy file under ``directory``."""
    data = spec["objective"]["data"]
    np.save(directory / name, np.asarray(data["weights"] if values is None else values))
    data["weights"] = {"uri": (directory / name).as_uri()}
    return spec


def weighted_spec(n: int = 200) -> dict:
    """A weighted least-squares problem with ordering constraints, solved by svrg_ol in 6
    partitions of 37 rows, whose weights move its optimum."""
    spec = weighted(random_spec("squared", "ordering_chain", 2, l2=0.5, n=n,
                                iterations=20_000), 5)
    spec["solver"].update(algorithm="svrg_ol", svrg={"workers": 0, "partition_rows": 37})
    return spec


@pytest.mark.parametrize("file_format, form", [("svmlight", "npy"), ("npy", "inline")])
def test_weighted_partitions_give_the_same_bits_on_a_cluster_and_the_weighted_optimum(
        tmp_path, cluster, monkeypatch, file_format, form):
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "1500")
    spec = weighted_spec()
    files = _written(copy.deepcopy(spec), tmp_path, file_format)
    if form == "npy":
        files = weights_file(files, tmp_path)
    in_process = solve(copy.deepcopy(files), roots=[tmp_path])
    files["solver"]["svrg"]["workers"] = 2
    on_cluster = solve(files, roots=[tmp_path])
    assert_same_result(on_cluster, in_process)
    assert on_cluster.mean.objective == in_process.mean.objective
    assert on_cluster.stats["partitions"] >= 3 and on_cluster.stats["batch_workers"] == 2
    # the same weights on the rows held in memory, and the exact weighted optimum
    in_memory = solve(copy.deepcopy(spec))
    assert in_memory.stats["placement"] == "in_process" and "partitions" not in in_memory.stats
    assert in_process.projected.objective == pytest.approx(in_memory.projected.objective,
                                                           rel=1e-9)
    optimum, _ = exact_optimum(spec)
    gap = (in_process.projected.objective - optimum) / abs(optimum)
    assert -1e-7 <= gap <= TOLERANCE["svrg_ol"]
    spec["objective"]["data"].pop("weights")
    unweighted, _ = exact_optimum(spec)
    assert abs(unweighted - optimum) > 10 * TOLERANCE["svrg_ol"] * abs(optimum)


@settings(max_examples=12, deadline=None)
@given(counts=st.lists(st.integers(0, 3), min_size=30, max_size=30).filter(any),
       form=st.sampled_from(["npy", "inline"]))
def test_integer_weights_value_a_point_as_the_rows_repeated(counts, form):
    """f(w) through the partitions' map-reduce equals the in-memory weighted objective and
    the objective of every row repeated by its weight; every row sampled carries its weight
    of mean one."""
    spec = random_spec("logistic", "none", 3, n=30, l2=0.1)
    spec["solver"]["algorithm"] = "svrg_ol"
    spec["objective"]["data"]["weights"] = counts
    points = np.random.default_rng(sum(counts)).normal(size=(3, spec["dimension"]))
    data = data_settings()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        files = _written(copy.deepcopy(spec), directory, "svmlight")
        if form == "npy":
            files = weights_file(files, directory)
        model = parse_spec(files)
        plan = plan_partitions(model, [directory], 7, 200, data)
        assert len(plan.pieces) >= 3
        with open_partitioned(plan, SvrgOptions(workers=0), 0, data) as batch:
            rowless = compile_problem(model, DataSource([directory], data),
                                      width_elsewhere=batch.d)
            partitioned = batch.values(points, problem_arrays(rowless, 1))
            every_row = batch.round_sample(0, batch.n)
    source = DataSource([], data)
    in_memory, copies = (problem_arrays(compile_problem(parse_spec(s), source), 1)
                         for s in (spec, repeated(spec)))
    for k, w in enumerate(points):
        assert partitioned[k] == pytest.approx(objective_value(in_memory, w), rel=1e-12)
        assert partitioned[k] == pytest.approx(objective_value(copies, w), rel=1e-12)
    assert every_row.weights == pytest.approx(np.asarray(counts) * 30 / sum(counts), rel=1e-12)


def test_past_the_budget_auto_runs_weighted_examples_on_the_cluster(tmp_path, cluster,
                                                                    monkeypatch):
    rng = np.random.default_rng(8)
    n = 12_000
    x, weights = rng.normal(size=(n, 8)), rng.uniform(0.0, 2.0, n)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", np.sign(x @ rng.normal(size=8) + 0.3 * rng.normal(size=n)))
    spec = weights_file({"objective": {"type": "empirical_risk", "loss": "logistic", "data": {
        "features": {"uri": (tmp_path / "x.npy").as_uri()},
        "labels": {"uri": (tmp_path / "y.npy").as_uri()}, "weights": weights.tolist()}},
        "bounds": {"lower": -1, "upper": 1},
        "constraints": [{"type": "ordering", "chain": [0, 1]}],   # auto: svrg_ol, not lbfgsb
        "solver": {"algorithm": "auto", "iterations": 4000, "seed": 5,
                   "svrg": {"partition_rows": 3000}}}, tmp_path)
    monkeypatch.setenv("LIGHTTOUCH_DATA_ROOTS", str(tmp_path))
    named = copy.deepcopy(spec)
    named["solver"].update(algorithm="svrg_ol", svrg={"workers": 0, "partition_rows": 3000})
    in_process = solve(named)
    budget = 4_000_000                  # under the examples' estimate, over the driver's
    monkeypatch.setenv("LIGHTTOUCH_MAX_JOB_BYTES", str(budget))
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    summary = summarize_spec(spec, max_job_bytes=budget)
    unweighted = copy.deepcopy(spec)
    unweighted["objective"]["data"].pop("weights")
    plain = summarize_spec(unweighted, max_job_bytes=budget)["placement"]
    placement = summary["placement"]
    assert placement["where"] == "cluster" and len(placement["worker_bytes"]) == 2
    assert placement["in_process_bytes"] - plain["in_process_bytes"] == 24 * n
    assert sum(placement["worker_bytes"]) - sum(plain["worker_bytes"]) == \
        pytest.approx(16 * n, abs=2)         # each worker's share rounded down
    on_cluster = lighttouch.solve(spec)
    assert on_cluster.algorithm == "svrg_ol" and on_cluster.stats["placement"] == "cluster"
    assert on_cluster.projected.solution == in_process.projected.solution
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]
    box_only = dict(spec, constraints=[])
    by_lbfgsb = lighttouch.solve(box_only)
    monkeypatch.delenv("LIGHTTOUCH_MAX_JOB_BYTES")
    in_memory = solve(dict(box_only, solver=dict(box_only["solver"], algorithm="lbfgsb")))
    assert by_lbfgsb.algorithm == "lbfgsb" and by_lbfgsb.stats["placement"] == "cluster"
    assert by_lbfgsb.expected.objective == pytest.approx(in_memory.expected.objective,
                                                         rel=1e-7)


def refused_with(spec: dict, root: Path, error: type, text: str) -> None:
    """Solving ``spec`` (data under ``root``) raises ``error`` whose message holds ``text``."""
    with pytest.raises(error) as refused:
        solve(spec, roots=[root])
    assert text in str(refused.value)


def assert_unrangeable_weights_refused(spec: dict, root: Path,
                                       values: np.ndarray) -> tuple[dict, dict]:
    """``spec`` (examples read in partitions under ``root``) refuses weights it cannot read
    in row ranges: ``values`` as a csv file, and as an npy file pinned by ``sha256``; returns
    those two specs."""
    (root / "w.csv").write_text("w\n" + "\n".join(map(str, values)) + "\n")
    as_csv = copy.deepcopy(spec)
    as_csv["objective"]["data"]["weights"] = {"uri": (root / "w.csv").as_uri()}
    refused_with(as_csv, root, SpecError, "objective.data.weights: examples read in "
                                          "partitions take their weights from a 1-D .npy file")
    pinned = weights_file(copy.deepcopy(spec), root, values)
    pinned["objective"]["data"]["weights"]["sha256"] = \
        hashlib.sha256((root / "w.npy").read_bytes()).hexdigest()
    refused_with(pinned, root, SpecError, "is npy with sha256: save the weights")
    return as_csv, pinned


def assert_bad_weights_refused(spec: dict, root: Path, values: np.ndarray,
                               rows_of: str) -> None:
    """``spec`` (200 examples read in partitions under ``root``) refuses bad weights in place
    of ``values`` (200,), naming the field, the global row and the file, and for a wrong
    length both lengths and ``rows_of`` (the examples' field)."""
    uri = (root / "w.npy").as_uri()
    for row, bad in ((123, -1.0), (7, np.nan), (199, np.inf)):
        wrong = values.copy()
        wrong[row] = bad
        refused_with(weights_file(copy.deepcopy(spec), root, wrong), root, DataError,
                 f"objective.data.weights: row {row} of {uri} has weight {bad!r}; give a "
                 f"finite number >= 0")
    refused_with(weights_file(copy.deepcopy(spec), root, values[:-1]), root, SpecError,
             f"objective.data.weights: 199 weights in {uri} for 200 rows of {rows_of}; give "
             f"one weight per row")
    inline = copy.deepcopy(spec)
    inline["objective"]["data"]["weights"] = values[:-2].tolist()
    refused_with(inline, root, SpecError, f"198 weights for 200 rows of {rows_of}")
    inline["objective"]["data"]["weights"] = [0.0] * 200
    refused_with(inline, root, SpecError, "objective.data.weights: every weight is 0")
    inline["objective"]["data"]["weights"] = [1.0] * 50 + [-2.0] + [1.0] * 149
    refused_with(inline, root, DataError, "objective.data.weights: row 50 has weight -2.0")
    refused_with(weights_file(copy.deepcopy(spec), root, np.ones((200, 2))), root, DataError,
             "objective.data.weights: found an array of shape (200, 2); need a 1-D array of "
             f"shape (n,), one value per row of {rows_of}")


def test_bad_weights_are_refused_naming_the_field_the_row_and_the_file(tmp_path):
    spec = _written(weighted_spec(), tmp_path, "svmlight")
    assert_bad_weights_refused(spec, tmp_path, np.asarray(spec["objective"]["data"]["weights"]),
                               "objective.data.features")


def test_weights_that_cannot_be_read_in_ranges_arerefused_with(tmp_path):
    spec = _written(weighted_spec(), tmp_path, "svmlight")
    as_csv, pinned = assert_unrangeable_weights_refused(
        spec, tmp_path, np.asarray(spec["objective"]["data"]["weights"]))
    # read in one process, the same weights are taken as they always were
    for refused in (as_csv, pinned):
        refused["solver"]["algorithm"] = "lbfgsb"
        refused["constraints"] = []
        assert solve(refused, roots=[tmp_path]).projected.status == "optimal"

