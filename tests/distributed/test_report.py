"""The Result's report on examples read in partitions (worker.pipeline.report_parts): the
training section from counts added over partitions against the in-memory report of the same
points, the validation data read on the driver, the same bits on a LocalCluster as in this
process, and bad validation data named as in memory."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from tests.distributed.test_distributed import _written
from tests.distributed.test_rates import D, examples, inline, rated_spec
from tests.specs import random_spec
from worker import solve
from worker.distributed.batch import open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_files
from worker.distributed.rate_parts import has_rates, open_rates
from worker.errors import DataError, SpecError
from worker.pipeline.report_parts import PartitionedTraining
from worker.pipeline.reporting import deployed_points
from worker.problem.compile import DataSource, compile_problem
from worker.report.build import solve_report
from worker.report.metrics import Deployed
from worker.report.schema import Report
from worker.settings import data_settings
from worker.spec.models import parse_spec

TOLERANCE = 1e-3


def assert_same_numbers(partitioned, in_memory, path: str = "report") -> None:
    """Two dumped reports alike: every number within rel 1e-9 (1e-12 near 0), every other
    field equal."""
    if isinstance(in_memory, dict):
        assert partitioned.keys() == in_memory.keys(), path
        for key in in_memory:
            assert_same_numbers(partitioned[key], in_memory[key], f"{path}.{key}")
    elif isinstance(in_memory, list):
        assert len(partitioned) == len(in_memory), path
        for k, (left, right) in enumerate(zip(partitioned, in_memory, strict=True)):
            assert_same_numbers(left, right, f"{path}[{k}]")
    elif isinstance(in_memory, float) and not isinstance(partitioned, bool):
        assert partitioned == pytest.approx(in_memory, rel=1e-9, abs=1e-12), path
    else:
        assert partitioned == in_memory, path


def deployed(d: int, seed: int = 4) -> dict[str, Deployed]:
    """A mixture of three members, its mean and a deterministic member."""
    rng = np.random.default_rng(seed)
    members = rng.normal(size=(3, d))
    weights = np.array([0.5, 0.3, 0.2])
    return {"mixture": Deployed(members, weights), "mean": Deployed.point(weights @ members),
            "deterministic": Deployed.point(members[1])}


def svrg_files(directory: Path, loss: str, constraints: str, weighted: bool
               ) -> tuple[dict, dict]:
    """(a spec whose examples are in an svmlight file for svrg_ol's partitions, the same
    spec with its data inline)."""
    memory = random_spec(loss, constraints, 5, n=300, l2=0.1, l1=0.01)
    if weighted:
        memory["objective"]["data"]["weights"] = \
            np.random.default_rng(6).uniform(0.2, 3.0, size=300).tolist()
    spec = _written(copy.deepcopy(memory), directory, "svmlight")
    if weighted:
        np.save(directory / "w.npy", memory["objective"]["data"]["weights"])
        spec["objective"]["data"]["weights"] = {"uri": (directory / "w.npy").as_uri()}
    spec["solver"].update(algorithm="svrg_ol", svrg={"workers": 0})
    return spec, memory


def in_memory_report(spec: dict, points: dict[str, Deployed], directory: Path) -> Report:
    """solve_report on the inline spec's compiled rows."""
    model = parse_spec(spec)
    source = DataSource([directory], data_settings())
    objective = compile_problem(model, source).objective
    return solve_report(model, objective.features, objective.labels, source, points,
                        TOLERANCE, objective.weights)


CASES = [("rates", False), ("rates", True), ("hinge", False), ("logistic", True),
         ("squared", True)]


@pytest.mark.parametrize("case, weighted", CASES)
def test_the_training_report_counted_on_partitions_is_the_in_memory_report(
        tmp_path, case, weighted):
    """Rate constraints of every kind (a ratio, a difference of groups' rates, a scaled
    term), linear-row blocks, class and real labels, with and without weights."""
    if case == "rates":
        spec = rated_spec(tmp_path, 600, weights=weighted)
        memory, d = inline(spec), D
    else:
        spec, memory = svrg_files(tmp_path, case, "mixed", weighted)
        d = spec["dimension"]
    model, settings = parse_spec(spec), data_settings()
    plan = plan_files(model, [tmp_path], 10**6, 1500, settings)
    points = deployed(d)
    with open_partitioned(plan, SvrgOptions(workers=0), 3, settings) as batch:
        if has_rates(model):
            open_rates(batch, plan, model, settings)
        rounds = batch.value_rounds
        report = PartitionedTraining(batch, plan, settings).report(
            model, DataSource([tmp_path], settings), points, TOLERANCE)
        assert len(batch.parts) >= 4 and batch.value_rounds == rounds + 1
    expected = in_memory_report(memory, points, tmp_path)
    assert_same_numbers(report.model_dump(), expected.model_dump())
    training = report.training.models
    assert report.training.examples == batch.n and training.keys() == points.keys()
    assert (training["mean"].error is None) == (case == "squared")
    rates = [c for c in training["mixture"].constraints if c.type == "rate"]
    assert len(rates) == (4 if case == "rates" else 0)
    assert len(training["mean"].constraints) > 0


def validation_files(directory: Path, n: int = 500) -> dict:
    """``validation`` data of the rated spec's kind in npy files under ``directory``."""
    x, y, groups = examples(n, seed=9)
    refs = {}
    for name, values in {"vx": x, "vy": y, **{f"v{g}": c for g, c in groups.items()}}.items():
        np.save(directory / f"{name}.npy", values)
        refs[name] = {"uri": (directory / f"{name}.npy").as_uri()}
    return {"features": refs["vx"], "labels": refs["vy"],
            "groups": {"a": refs["va"], "b": refs["vb"]}}


def rated_job(directory: Path) -> dict:
    spec = rated_spec(directory, 3000, weights=True, iterations=1000)
    spec["validation"] = validation_files(directory)
    return spec


def test_a_partitioned_job_reports_on_training_and_validation_data_as_in_memory(
        tmp_path, cluster, monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "20000")
    spec = rated_job(tmp_path)
    in_process = solve(copy.deepcopy(spec), roots=[tmp_path])
    assert in_process.stats["partitions"] >= 4 and in_process.stats["report_s"] > 0
    memory = inline(spec)
    model = parse_spec(memory)
    source = DataSource([tmp_path], data_settings())
    objective = compile_problem(model, source).objective
    expected = solve_report(model, objective.features, objective.labels, source,
                            deployed_points(in_process), model.solver.tolerance,
                            objective.weights)
    assert_same_numbers(in_process.report.model_dump(), expected.model_dump())
    validation = in_process.report.validation
    assert validation.examples == 500
    assert any(t.interval is not None for c in validation.models["mean"].constraints
               for t in c.terms)
    # the report's numbers of the mean are the Result's, scored by other map-reduces
    mean = in_process.report.training.models["mean"]
    assert mean.objective == pytest.approx(in_process.mean.objective, rel=1e-9)
    assert mean.max_violation == pytest.approx(in_process.mean.max_violation, abs=1e-12)
    spec["solver"]["workers"] = 2
    on_cluster = solve(copy.deepcopy(spec), roots=[tmp_path])
    assert on_cluster.stats["placement"] == "cluster"
    assert on_cluster.report == in_process.report
    assert on_cluster.stats["communication_rounds"] == in_process.stats["communication_rounds"]


def test_svrg_ol_on_partitions_reports_the_objective_it_scored(tmp_path):
    spec, _ = svrg_files(tmp_path, "logistic", "mixed", True)
    spec["solver"]["iterations"] = 5000
    answer = solve(spec, roots=[tmp_path])
    assert answer.stats["partitions"] >= 1 and "report_s" in answer.stats
    for name, point in (("mean", answer.mean), ("projected", answer.projected)):
        assert answer.report.training.models[name].objective == \
            pytest.approx(point.objective, rel=1e-9)


def _refused(spec: dict, directory: Path | None = None) -> str:
    with pytest.raises((SpecError, DataError)) as refused:
        solve(copy.deepcopy(spec), roots=None if directory is None else [directory])
    return str(refused.value)


def test_bad_validation_data_are_named_as_in_memory(tmp_path):
    spec = rated_job(tmp_path)
    spec["solver"]["iterations"] = 200
    column = np.load(tmp_path / "va.npy")
    column[321] = 2.0
    np.save(tmp_path / "va.npy", column)
    message = _refused(spec, tmp_path)
    assert "validation.groups.a[321]" in message
    assert message == _refused(inline(spec), tmp_path)
    np.save(tmp_path / "va.npy", (column[:-1] > 0).astype(float))
    message = _refused(spec, tmp_path)
    assert "validation.groups.a" in message and message == _refused(inline(spec), tmp_path)
