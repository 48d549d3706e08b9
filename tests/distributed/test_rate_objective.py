"""A rate as the objective on examples read in partitions (worker.distributed.rate_parts'
PartitionedTrueRate and the games' rounds, worker.algorithms.run.game_rounds): its true rate
and hinge proxy by map-reduce against the in-memory TrueRate and proxy objective, a round's
rows of it as an unbiased estimate, the game's answer and its report against the in-memory
game's, the same bits on a LocalCluster, the placement past the budget, and the errors that
name the field and the global row."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from tests.distributed.budget import answer_past_the_budget
from tests.distributed.test_rates import (
    CONSTRAINTS,
    D,
    empty_group_refused,
    inline,
    opened_rates,
    rated_spec,
    refused,
    refused_in_memory,
)
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.game_rounds import round_objective
from worker.distributed.rate_parts import open_rates
from worker.distributed.tasks import rows_matrix
from worker.kernels.objective import objective_value
from worker.pipeline.memory import rate_bytes
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

#: Neyman-Pearson with fairness: a true positive rate of at least 0.8, and equal opportunity
#: (the first two of the rate constraints' tests).
NEYMAN_PEARSON = [{"type": "rate", "lhs": {"metric": "true_positive_rate"}, "op": ">=",
                   "rhs": 0.8}] + CONSTRAINTS[:2]


def objective_spec(directory: Path, n: int, *, weights: bool = False,
                   workers: int | None = 0, iterations: int | str = 3000,
                   constraints=NEYMAN_PEARSON, metric: str = "error_rate",
                   group: str | None = "b") -> dict:
    """:func:`tests.distributed.test_rates.rated_spec`'s files with ``metric`` on
    ``group`` as the objective (by default the least error rate on group b under
    :data:`NEYMAN_PEARSON`, which these rows cannot bring to 0)."""
    spec = rated_spec(directory, n, weights=weights, workers=workers, iterations=iterations,
                      constraints=constraints)
    data = spec["objective"]["data"]
    spec["objective"] = {"type": "rate", "metric": metric, "group": group, "data": data}
    return spec


def in_memory(spec: dict):
    """The spec's problem compiled in one process."""
    return compile_problem(parse_spec(inline(spec)), DataSource([], data_settings()))


@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("metric,group", [("false_positive_rate", "a"), ("error_rate", None)])
def test_the_map_reduced_rate_and_proxy_are_the_in_memory_ones(tmp_path, weights, metric,
                                                               group):
    spec = objective_spec(tmp_path, 400, weights=weights, metric=metric, group=group)
    expected = in_memory(spec)
    plan, opened, model, settings = opened_rates(spec, tmp_path)
    points = np.random.default_rng(1).normal(size=(7, D))
    with opened as batch:
        rates = open_rates(batch, plan, model, settings)
        assert len(batch.parts) >= 4 and rates.constraints.m == 3
        objective = rates.objective
        np.testing.assert_allclose(objective.values(points), expected.true_rate.values(points),
                                   atol=1e-12)
        arrays = problem_arrays(expected, expected.m)
        np.testing.assert_allclose(objective.proxy_values(points),
                                   [objective_value(arrays, w) for w in points], atol=1e-12)
        assert objective.counted == expected.n
        # the constraints beside it are the in-memory ones
        np.testing.assert_allclose(rates.constraints.values(points),
                                   expected.rates.values(points), atol=1e-12)


@pytest.mark.parametrize("weights,metric,group", [(False, "false_positive_rate", "a"),
                                                  (True, "error_rate", "b")])
def test_a_round_of_every_row_is_the_proxy_and_a_sample_estimates_it(tmp_path, weights,
                                                                     metric, group):
    n = 4000
    spec = objective_spec(tmp_path, n, weights=weights, metric=metric, group=group)
    expected = in_memory(spec)
    plan, opened, model, settings = opened_rates(spec, tmp_path, 30_000)
    points = np.random.default_rng(2).normal(size=(3, D))
    with opened as batch:
        objective = open_rates(batch, plan, model, settings).objective
        proxy = objective.proxy_values(points)

        def estimate(key: int, rows: int) -> tuple[np.ndarray, float]:
            """f's value on the round's rows at each point, times its scale, and |S| drawn."""
            drawn, every = objective.rate.round_sample(np.uint64(key), rows, "a round")
            held, scale = round_objective(drawn, objective.rate.of(every))
            margins = np.maximum(0.0, 1.0 - held.labels[:, None] * (
                rows_matrix(held, D) @ points.T))
            mean = held.weights @ margins / held.weights.sum()
            return scale * mean, held.labels.shape[0]

        whole, counted = estimate(7, n)
        np.testing.assert_allclose(whole, proxy, rtol=1e-12)
        assert counted == expected.n                     # every row of S, as in memory
        estimates = np.array([estimate(key, n // 4)[0] for key in range(40)])
    spread = estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - proxy) <= 4 * spread + 1e-9)
    assert np.all(estimates.std(axis=0) > 0)


@pytest.mark.parametrize("weights", [False, True])
def test_a_round_of_every_row_plays_the_in_memory_game(tmp_path, weights):
    spec = objective_spec(tmp_path, 3000, weights=weights)
    on_parts = solve(copy.deepcopy(spec), roots=[tmp_path])
    memory = solve(inline(spec))
    assert on_parts.stats["rounds"] == 2 and "rounds" not in memory.stats
    assert memory.mean.objective > 0.01
    assert on_parts.algorithm == memory.algorithm == "proxy_lagrangian"
    np.testing.assert_allclose(on_parts.mean.solution, memory.mean.solution, rtol=1e-9,
                               atol=1e-12)
    assert on_parts.mean.objective == pytest.approx(memory.mean.objective, rel=1e-9)
    assert on_parts.mean.max_violation == pytest.approx(memory.mean.max_violation, abs=1e-12)
    assert [m.weight for m in on_parts.mixture] == pytest.approx(
        [m.weight for m in memory.mixture], rel=1e-9, abs=1e-12)
    counted, read = (r.report.training.models["mean"] for r in (on_parts, memory))
    assert counted.objective == pytest.approx(read.objective, rel=1e-9) and read.objective > 0
    assert counted.error == pytest.approx(read.error, rel=1e-9)
    assert [c.worst for c in counted.constraints] == pytest.approx(
        [c.worst for c in read.constraints], rel=1e-9, abs=1e-12)


def test_the_objective_alone_gives_the_same_bits_on_a_cluster(tmp_path, cluster,
                                                              monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "20000")
    spec = objective_spec(tmp_path, 3000, weights=True, constraints=[], group=None,
                          metric="error_rate")
    in_process = solve(copy.deepcopy(spec), roots=[tmp_path])
    spec["solver"]["workers"] = 2
    on_cluster = solve(copy.deepcopy(spec), roots=[tmp_path])
    assert [m.solution for m in on_cluster.mixture] == [m.solution for m in in_process.mixture]
    assert on_cluster.mean.objective == in_process.mean.objective
    assert on_cluster.stats["placement"] == "cluster" and on_cluster.stats["partitions"] >= 4
    assert on_cluster.stats["communication_rounds"] == in_process.stats["communication_rounds"]
    memory = solve(inline(spec))
    assert in_process.mean.objective == pytest.approx(memory.mean.objective, rel=1e-9)


def test_auto_past_the_budget_plays_on_the_cluster_or_is_refused(tmp_path, cluster,
                                                                  monkeypatch):
    spec = objective_spec(tmp_path, 300_000, workers=None)     # past a round's rows
    answer = answer_past_the_budget(spec, tmp_path, cluster.scheduler_address, monkeypatch,
                                    "proxy_lagrangian")
    assert "a rate as the objective" in answer.stats["method_reason"]
    assert answer.mean.max_violation <= 1e-3
    # the answer's objectives are the true rate on every row
    problem = in_memory(objective_spec(tmp_path, 300_000, workers=None))
    members = np.array([m.solution for m in answer.mixture])
    weights = np.array([m.weight for m in answer.mixture])
    assert float(weights @ problem.true_rate.values(members)) == pytest.approx(
        answer.expected.objective, abs=1e-12)
    assert problem.true_rate.values(np.array(answer.mean.solution))[0] == pytest.approx(
        answer.mean.objective, abs=1e-12)


def test_the_driver_s_estimate_counts_the_objective_s_share(tmp_path):
    """A round's rows carry one more rate term than the same constraints under a loss."""
    spec = objective_spec(tmp_path, 3000)
    under_a_loss = rated_spec(tmp_path, 3000, constraints=NEYMAN_PEARSON)
    estimates = [summarize_spec(s, roots=[tmp_path])["memory_estimate_bytes"]
                 for s in (spec, under_a_loss)]
    assert estimates[0] - estimates[1] == 3000 * rate_bytes(1)


def test_bad_groups_and_an_unknown_objective_group_are_named(tmp_path):
    message = empty_group_refused(objective_spec(tmp_path, 3000, constraints=[], group="a"),
                                  tmp_path)
    assert message.startswith("objective.group") and "group 'a' has no examples" in message
    unknown = objective_spec(tmp_path, 300, constraints=[], group="c")
    message = refused(unknown, tmp_path)
    assert message.startswith("objective.group") and "unknown group 'c'" in message
    assert message == refused_in_memory(unknown)


def test_a_method_other_than_the_proxy_lagrangian_is_refused(tmp_path):
    spec = objective_spec(tmp_path, 300)
    spec["solver"]["algorithm"] = "lagrangian"
    message = refused(spec, tmp_path)
    assert message.startswith("solver.algorithm") and "cannot minimize a rate" in message
