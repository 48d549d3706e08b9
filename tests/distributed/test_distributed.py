"""The SVRG OL batch phase on a real Dask LocalCluster (worker processes): same bits as
in-process, workers reading their partitions by URI while the driver holds no examples, a
killed worker, a dead cluster."""

from __future__ import annotations

import os
import signal
import threading
import time

import distributed
import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from tests.problems import random_problem
from tests.specs import random_spec
from worker import solve
from worker.algorithms.registry import run_algorithm
from worker.algorithms.run.options import SolverOptions
from worker.algorithms.runners.svrg_ol import SERIAL_CHUNK
from worker.distributed.batch import CompiledBatch, DaskExecutor, InProcessBatch, open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_partitions
from worker.errors import SolverError
from worker.pipeline.options import solver_options
from worker.problem.compile import DataSource, compile_problem
from worker.settings import DaskSettings, data_settings, read_settings
from worker.spec.models import parse_spec


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as connected:
        yield connected


@pytest.fixture
def scheduler(cluster, monkeypatch):
    """Point solve() at the module's cluster (LIGHTTOUCH_DASK_SCHEDULER)."""
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    return cluster.scheduler_address


def svrg_spec(workers: int, seed: int = 2) -> dict:
    spec = random_spec("logistic", "mixed", seed, n=200, iterations=20_000)
    spec["solver"].update(algorithm="svrg_ol",
                          svrg={"workers": workers, "partition_rows": 37})
    return spec


def assert_same_result(first, second) -> None:
    assert first.projected.solution == second.projected.solution
    assert [m.solution for m in first.mixture] == [m.solution for m in second.mixture]
    assert first.stats["communication_rounds"] == second.stats["communication_rounds"]


def test_local_cluster_gives_the_in_process_bits():
    """workers=2 without a scheduler address: solve() starts its own LocalCluster."""
    on_cluster = solve(svrg_spec(2))
    assert_same_result(on_cluster, solve(svrg_spec(0)))
    assert on_cluster.stats["batch_workers"] == 2 and on_cluster.stats["bytes_moved"] > 0


def _written(spec: dict, directory, file_format: str) -> dict:
    """The spec with its examples moved into a file of ``file_format`` under ``directory``."""
    data = spec["objective"]["data"]
    features, labels = np.array(data.pop("features")), np.array(data.pop("labels"))
    if file_format == "svmlight":
        dump_svmlight_file(features, labels, str(directory / "train.svm"), zero_based=True)
        data["features"] = {"uri": (directory / "train.svm").as_uri(), "zero_based": True,
                            "n_features": spec["dimension"]}
    elif file_format == "feather":
        columns = {f"x{j}": features[:, j] for j in range(features.shape[1])}
        feather.write_feather(pa.table(columns | {"y": labels}), directory / "train.feather")
        data["features"] = {"uri": (directory / "train.feather").as_uri(), "label_column": "y"}
    else:
        np.save(directory / "x.npy", features)
        np.save(directory / "y.npy", labels)
        data.update(features={"uri": (directory / "x.npy").as_uri()},
                    labels={"uri": (directory / "y.npy").as_uri()})
    return spec


@pytest.mark.parametrize("file_format", ["svmlight", "npy", "feather"])
def test_workers_read_their_partitions_by_uri(tmp_path, scheduler, monkeypatch, file_format):
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "1500")
    spec = _written(svrg_spec(2, seed=4), tmp_path, file_format)
    on_cluster = solve(spec, roots=[tmp_path])
    spec["solver"]["svrg"]["workers"] = 0
    in_process = solve(spec, roots=[tmp_path])
    assert_same_result(on_cluster, in_process)
    assert on_cluster.mean.objective == in_process.mean.objective
    stats = on_cluster.stats
    whole = file_format == "feather"  # not cut: one worker reads the file
    assert stats["partitions"] == 1 if whole else stats["partitions"] >= 3
    assert stats["batch_workers"] == 2
    # the census, every batch phase, and the objective values of the candidates, then of the
    # mean and of its projection where each is a point not scored before, then the report
    members = [member.solution for member in on_cluster.mixture]
    assert all(solution is not None for solution in members)
    new_mean = on_cluster.mean.solution not in members
    new_projection = on_cluster.projected.method != "feasible"
    assert stats["communication_rounds"] == \
        stats["rounds_planned"] + 1 + 1 + new_mean + new_projection + 1
    assert on_cluster.sizes.examples == 200
    assert stats["bytes_moved"] > in_process.stats["bytes_moved"]


def test_auto_stops_on_its_certificate_when_the_workers_hold_the_rows(tmp_path, scheduler,
                                                                      monkeypatch):
    """``iterations: "auto"`` over partitions the driver does not hold: the full gradient of
    a batch phase certifies the anchor, on the cluster as in this process."""
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "1500")
    spec = _written(random_spec("logistic", "none", 3, n=200, l2=0.01), tmp_path, "svmlight")
    spec["solver"] = {"seed": 3, "algorithm": "svrg_ol", "svrg": {"workers": 2}}
    on_cluster = solve(spec, roots=[tmp_path])
    spec["solver"]["svrg"]["workers"] = 0
    in_process = solve(spec, roots=[tmp_path])
    assert_same_result(on_cluster, in_process)
    stats = on_cluster.stats
    assert stats["partitions"] >= 3 and stats["batch_workers"] == 2
    assert stats["stopped_by"] == "certificate"
    assert stats["gap"] <= 1e-3 * (stats["lower_bound"] + stats["gap"])    # f(v_k) > 0
    assert stats["lower_bound"] == in_process.stats["lower_bound"]
    assert stats["iterations"] < 200_000


def test_a_long_serial_phase_draws_its_examples_in_chunks(tmp_path, scheduler):
    """A round of 2.3 chunks of serial steps on partitions the driver does not hold: two
    more communication rounds than a round of one chunk, and the same bits on the cluster
    and in this process."""
    spec = _written(random_spec("logistic", "mixed", 6, n=3000, iterations=3000), tmp_path,
                    "svmlight")
    steps = int(2.3 * SERIAL_CHUNK)
    spec["solver"].update(algorithm="svrg_ol", iterations=steps,
                          svrg={"workers": 2, "serial_steps": steps})
    on_cluster = solve(spec, roots=[tmp_path])
    spec["solver"]["svrg"]["workers"] = 0
    in_process = solve(spec, roots=[tmp_path])
    assert_same_result(on_cluster, in_process)
    one_chunk = dict(spec, solver=dict(spec["solver"], iterations=SERIAL_CHUNK,
                                       svrg={"workers": 0, "serial_steps": SERIAL_CHUNK}))
    rounds = solve(one_chunk, roots=[tmp_path]).stats["communication_rounds"]
    assert in_process.stats["iterations"] == steps
    assert in_process.stats["communication_rounds"] == rounds + 2


def test_the_driver_holds_no_examples(tmp_path, scheduler):
    spec = _written(random_spec("logistic", "mixed", 6, n=3000, iterations=3000), tmp_path,
                    "svmlight")
    spec["solver"].update(algorithm="svrg_ol", svrg={"workers": 2})
    model = parse_spec(spec)
    data, cluster = data_settings(), read_settings(DaskSettings)
    plan = plan_partitions(model, [tmp_path], 1000, 20_000, data)
    with open_partitioned(plan, SvrgOptions(workers=2, cluster=cluster), model.solver.seed,
                          data) as batch:
        problem = compile_problem(model, DataSource([tmp_path], data_settings()),
                                  width_elsewhere=batch.d)
        assert problem.n == 0 and problem.objective.features.nnz == 0
        trajectory = run_algorithm(problem, solver_options(model.solver, cluster), source=batch)
        assert batch.n == 3000 and len(batch.parts) == len(plan.pieces) > 3
    rounds = trajectory.stats.rounds_planned
    # the serial phase ran on the last round's ~T_k k_f sampled examples, not on all 3000
    assert 0 < trajectory.arrays.labels.size < 2 * 3000 / rounds


def _sparse_problem():
    problem = random_problem("logistic", "none", d=64, n=40_000, seed=1)
    features = sp.random(40_000, 64, density=0.2, random_state=1, format="csr")
    return problem.__class__(problem.objective.__class__(
        problem.objective.kind, features, problem.objective.labels[:1].repeat(40_000),
        problem.objective.quadratic, problem.objective.linear), problem.constraints,
        problem.lower, problem.upper)


def test_killed_worker_is_recomputed(client):
    problem = _sparse_problem()
    options = SvrgOptions(partition_rows=500)
    anchor = np.linspace(-1, 1, problem.d)
    expected = InProcessBatch(problem, options, seed=3).gradient(anchor, 0, problem.n)
    batch = CompiledBatch(DaskExecutor(client, 120), problem, options, seed=3)
    assert np.array_equal(batch.gradient(anchor, 0, problem.n).mean, expected.mean)
    victim = next(iter(client.run(os.getpid).values()))
    results = []
    thread = threading.Thread(target=lambda: results.append(batch.gradient(anchor, 0,
                                                                           problem.n)))
    began = time.perf_counter()
    thread.start()
    time.sleep(0.02)
    os.kill(victim, signal.SIGKILL)
    thread.join(120)
    assert not thread.is_alive() and time.perf_counter() - began < 120
    after = batch.gradient(anchor, 0, problem.n)  # the victim's partitions are recomputed
    for result in (results[0], after):
        assert np.array_equal(result.mean, expected.mean)
        assert result.examples == problem.n


def test_cluster_without_workers_fails_with_a_clear_error(monkeypatch):
    with distributed.LocalCluster(n_workers=0, processes=True,
                                  dashboard_address=":0") as empty:
        monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", empty.scheduler_address)
        monkeypatch.setenv("LIGHTTOUCH_DASK_TIMEOUT_S", "2")
        began = time.perf_counter()
        with pytest.raises(SolverError, match="did not finish in 2 s.*live workers"):
            solve(svrg_spec(1))
        assert time.perf_counter() - began < 30


def test_a_batch_phase_on_dask_without_cluster_settings_is_refused():
    problem = random_problem("logistic", "none", d=4, n=50, seed=2)
    options = SolverOptions(algorithm="svrg_ol", iterations=100,
                            svrg=SvrgOptions(workers=2))    # no cluster settings resolved
    with pytest.raises(SolverError, match="needs the cluster settings"):
        run_algorithm(problem, options)
