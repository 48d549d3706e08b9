"""Rate constraints on examples read in partitions (worker.distributed.rate_parts and the games'
rounds, worker.algorithms.run.game_rounds): the rates' map-reduces against the in-memory
RateSet, a round's sample as an estimate, the same bits on a LocalCluster as in this process,
the answer against the in-memory game's, the placement past the budget, and the errors that
name the field, the row and the file."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from tests.distributed.budget import answer_past_the_budget
from worker import solve
from worker.distributed.batch import open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_files
from worker.distributed.rate_parts import open_rates
from worker.errors import SpecError
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

D = 6
#: TPR(a) >= 0.95 TPR(all), TPR(b) >= 0.95 TPR(all) (equal opportunity), an error-rate
#: difference bound, and a precision floor (a ratio).
CONSTRAINTS = [
    {"type": "rate", "lhs": {"metric": "true_positive_rate", "group": group}, "op": ">=",
     "rhs": {"terms": [{"metric": "true_positive_rate", "group": None, "scale": 0.95}]}}
    for group in ("a", "b")] + [
    {"type": "rate", "lhs": {"metric": "error_rate", "group": "a"}, "op": "<=",
     "rhs": {"terms": [{"metric": "error_rate", "group": "b"}], "constant": 0.05}},
    {"type": "rate", "lhs": {"metric": "precision", "group": "b"}, "op": ">=", "rhs": 0.5}]


def examples(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """n rows of D features (the last a constant), ±1 labels and two groups, one of them
    leaning on the first feature, so the unconstrained model treats them differently."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, D))
    x[:, -1] = 1.0
    y = np.where(x @ rng.normal(size=D) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    a = (rng.uniform(size=n) < 0.3).astype(float)
    a[x[:, 0] > 0.8] = 1.0
    return x, y, {"a": a, "b": 1.0 - a}


def rated_spec(directory: Path, n: int, *, weights: bool = False, workers: int | None = 0,
               iterations: int | str = 3000, constraints=CONSTRAINTS) -> dict:
    """A hinge-loss spec on ``n`` rows in an svmlight file under ``directory`` whose groups
    (and, with ``weights``, example weights) are 1-D npy files, read in partitions of about
    ``n / 4`` rows when ``workers`` is given."""
    x, y, groups = examples(n)
    dump_svmlight_file(x, y, str(directory / "train.svm"), zero_based=True)
    refs = {}
    for name, column in groups.items():
        np.save(directory / f"{name}.npy", column)
        refs[name] = {"uri": (directory / f"{name}.npy").as_uri()}
    data = {"features": {"uri": (directory / "train.svm").as_uri(), "zero_based": True,
                         "n_features": D}, "groups": refs}
    if weights:
        np.save(directory / "w.npy", np.random.default_rng(5).uniform(0.2, 3.0, size=n))
        data["weights"] = {"uri": (directory / "w.npy").as_uri()}
    spec = {"dimension": D, "objective": {"type": "empirical_risk", "loss": "hinge",
                                          "data": data},
            "constraints": copy.deepcopy(constraints),
            "solver": {"algorithm": "proxy_lagrangian", "iterations": iterations, "seed": 3,
                       "candidates": 20}}
    if workers is not None:
        spec["solver"]["workers"] = workers
    return spec


def inline(spec: dict) -> dict:
    """``spec`` with every file it names read into inline values (one process reads all)."""
    inlined = copy.deepcopy(spec)
    inlined["solver"].pop("workers", None)
    data = inlined["objective"]["data"]
    x, y = load_svmlight_file(data["features"]["uri"].removeprefix("file://"), n_features=D,
                              zero_based=True)
    data.update(features=x.toarray().tolist(), labels=y.tolist())
    data["groups"] = {name: np.load(ref["uri"].removeprefix("file://")).tolist()
                      for name, ref in data["groups"].items()}
    if "weights" in data:
        data["weights"] = np.load(data["weights"]["uri"].removeprefix("file://")).tolist()
    return inlined


def opened_rates(spec: dict, directory: Path, partition_bytes: int = 1500):
    """The spec's plan cut in pieces of about ``partition_bytes``, read in this process,
    with its partitioned rates."""
    model, settings = parse_spec(spec), data_settings()
    plan = plan_files(model, [directory], 10**6, partition_bytes, settings)
    return plan, open_partitioned(plan, SvrgOptions(workers=0), 3, settings), model, settings


@pytest.mark.parametrize("weights", [False, True])
def test_partitioned_rates_are_the_in_memory_rates(tmp_path, weights):
    spec = rated_spec(tmp_path, 400, weights=weights)
    expected = compile_problem(parse_spec(inline(spec)), DataSource([], data_settings())).rates
    plan, opened, model, settings = opened_rates(spec, tmp_path)
    with opened as batch:
        rates = open_rates(batch, plan, model, settings).constraints
        assert len(batch.parts) >= 4 and rates.m == expected.m == 4
        points = np.random.default_rng(1).normal(size=(7, D))
        np.testing.assert_allclose(rates.values(points), expected.values(points), atol=1e-12)
        np.testing.assert_allclose(rates.values(points[0]), expected.values(points[0]),
                                   atol=1e-12)
        for proxy in ("hinge", "ramp"):
            np.testing.assert_allclose(rates.proxy_values(points, proxy),
                                       expected.proxy_values(points, proxy), atol=1e-12)
            np.testing.assert_allclose(rates.relaxed_values(points, proxy),
                                       expected.relaxed_values(points, proxy), atol=1e-12)
        np.testing.assert_allclose(rates.least, expected.proxy.constant, atol=1e-12)


def test_a_round_of_every_row_holds_the_whole_rates_and_a_sample_estimates_them(tmp_path):
    n = 4000
    spec = rated_spec(tmp_path, n)
    plan, opened, model, settings = opened_rates(spec, tmp_path, 30_000)
    points = np.random.default_rng(2).normal(size=(3, D))
    with opened as batch:
        rates = open_rates(batch, plan, model, settings).constraints
        whole = rates.values(points)
        rows, every = rates.round_sample(np.uint64(7), n, "every row")
        assert rows.labels.shape[0] == n
        np.testing.assert_allclose(every.values(points), whole, atol=1e-12)
        np.testing.assert_allclose(every.relaxed_values(points), rates.relaxed_values(points),
                                   atol=1e-12)
        estimates = np.array([rates.round_sample(np.uint64(key), n // 4, "a quarter")[1]
                              .values(points) for key in range(40)])
    # each estimate is a mean over about n / 4 rows: the average of 40 is within a few of
    # its standard errors of the whole data's value
    spread = estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - whole) <= 4 * spread + 1e-9)
    assert np.all(estimates.std(axis=0) > 0)


def test_the_game_gives_the_same_bits_on_a_cluster_and_the_in_memory_answer(
        tmp_path, cluster, monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "20000")
    spec = rated_spec(tmp_path, 3000)
    in_process = solve(copy.deepcopy(spec), roots=[tmp_path])
    spec["solver"]["workers"] = 2
    on_cluster = solve(copy.deepcopy(spec), roots=[tmp_path])
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]
    assert on_cluster.mean.solution == in_process.mean.solution
    stats = on_cluster.stats
    assert stats["placement"] == "cluster" and stats["partitions"] >= 4
    assert stats["rounds"] == 2 and stats["communication_rounds"] == \
        in_process.stats["communication_rounds"]
    assert in_process.stats["placement"] == "in_process" and in_process.stats["rounds"] == 2
    # under ROUND_ROWS rows a round holds every row: the game in memory draws the same
    # examples, so only the sums' order tells the answers apart
    memory = solve(inline(spec))
    assert "rounds" not in memory.stats
    assert in_process.mean.objective == pytest.approx(memory.mean.objective, rel=1e-9)
    assert in_process.mean.max_violation == memory.mean.max_violation == 0.0


def test_sampled_rounds_reach_the_in_memory_game_and_meet_the_constraints(tmp_path):
    """Past ROUND_ROWS rows each round draws a sample: the answer, scored on every row,
    meets the constraints within the tolerance and is as good as the in-memory game's."""
    spec = rated_spec(tmp_path, 200_000, iterations="auto")
    on_parts = solve(copy.deepcopy(spec), roots=[tmp_path])
    memory = solve(inline(spec))
    tolerance = 1e-3
    assert on_parts.stats["stopped_by"] == "converged"
    assert on_parts.mean.max_violation <= tolerance
    assert on_parts.mean.objective <= memory.mean.objective * 1.01
    assert on_parts.stats["round_rows"] < 200_000
    # the Result scores the mixture on every row: it agrees with the in-memory rates
    rates = compile_problem(parse_spec(inline(spec)), DataSource([], data_settings())).rates
    members = np.array([m.solution for m in on_parts.mixture])
    weights = np.array([m.weight for m in on_parts.mixture])
    assert max(0.0, float((weights @ rates.values(members)).max())) == pytest.approx(
        on_parts.mean.max_violation, abs=1e-12)


def test_auto_past_the_budget_plays_on_the_cluster_or_is_refused(tmp_path, cluster,
                                                                  monkeypatch):
    spec = rated_spec(tmp_path, 300_000, workers=None)     # past a round's rows
    answer = answer_past_the_budget(spec, tmp_path, cluster.scheduler_address, monkeypatch,
                                    "proxy_lagrangian")
    assert "rate constraints" in answer.stats["method_reason"]
    assert answer.mean.max_violation <= 1e-3


def refused(spec: dict, directory: Path) -> str:
    """The SpecError message of solving ``spec`` with its data under ``directory``."""
    with pytest.raises(SpecError) as error:
        solve(spec, roots=[directory])
    return str(error.value)


def empty_group_refused(spec: dict, directory: Path) -> str:
    """``spec``'s group column a (3,000 rows under ``directory``): a value 2 at row 2345 and
    a short column are named by field, global row and length; returns the refusal of a
    column of zeros (a group with no examples), the in-memory path's message."""
    column = np.load(directory / "a.npy")
    column[2345] = 2.0
    np.save(directory / "a.npy", column)
    assert "objective.data.groups.a[2345]" in refused(spec, directory)
    np.save(directory / "a.npy", column[:2999])
    message = refused(spec, directory)
    assert "objective.data.groups.a" in message and "length 2999" in message
    np.save(directory / "a.npy", np.zeros(3000))
    message = refused(spec, directory)
    assert message == refused_in_memory(spec)
    return message


def test_bad_groups_are_named_by_field_and_global_row(tmp_path):
    message = empty_group_refused(rated_spec(tmp_path, 3000), tmp_path)
    assert "constraints[0].lhs" in message and "group 'a' has no examples" in message


def refused_in_memory(spec: dict) -> str:
    """The SpecError message of solving ``spec`` with its files read inline."""
    with pytest.raises(SpecError) as error:
        solve(inline(spec))
    return str(error.value)


def test_what_cannot_be_partitioned_is_refused_with_what_to_give(tmp_path):
    spec = rated_spec(tmp_path, 300)
    own = copy.deepcopy(spec)
    own["constraints"][0]["data"] = inline(spec)["objective"]["data"]
    inline_groups = copy.deepcopy(spec)
    inline_groups["objective"]["data"]["groups"]["a"] = inline(spec)["objective"]["data"][
        "groups"]["a"]
    for partitioned in (own, inline_groups):
        message = refused(partitioned, tmp_path)
        assert "solver.workers" in message and "groups as 1-D npy files" in message
    never = rated_spec(tmp_path, 300, constraints=[
        {"type": "rate", "lhs": {"metric": "true_positive_rate", "group": "a"}, "op": ">=",
         "rhs": 1.5}])
    message = refused(never, tmp_path)
    assert "constraints[0]" in message and "can never hold" in message
    assert message == refused_in_memory(never)
