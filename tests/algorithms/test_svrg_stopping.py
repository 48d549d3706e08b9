"""SVRG OL with ``iterations: "auto"``: the certificate from a round's full gradient is a valid
lower bound, ends the schedule early near CVXPY's optimum, and an explicit budget runs as
given (worker/algorithms/run/snapshot_rule.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.snapshot_rule import SnapshotRule
from worker.distributed.batch import InProcessBatch
from worker.distributed.options import SvrgOptions
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

#: Serial steps of the planned schedule (the default budget).
PLANNED = 200_000


def unconstrained(loss: str, seed: int, **terms) -> dict:
    """A random problem on the box [-1, 1]^d with no linear constraints, SVRG OL's defaults
    in this process."""
    spec = random_spec(loss, "none", seed, n=400, **terms)
    spec["solver"] = {"seed": seed, "algorithm": "svrg_ol", "svrg": {"workers": 0}}
    return spec


@pytest.mark.parametrize(("loss", "seed", "terms"), [
    ("logistic", 0, {}), ("logistic", 1, {"l1": 0.02}), ("squared", 2, {"l2": 0.1}),
    ("squared", 3, {"l1": 0.05, "l2": 0.01})])
def test_the_certificate_is_below_the_optimum_anywhere(loss, seed, terms):
    spec = unconstrained(loss, seed, **terms)
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    optimum, solution = exact_optimum(spec)
    batch = InProcessBatch(problem, SvrgOptions(partition_rows=64), seed)
    rng = np.random.default_rng(seed)
    for point in (solution, rng.uniform(-1, 1, size=problem.d), np.zeros(problem.d)):
        rule = SnapshotRule(problem_arrays(problem, 0), problem, 1e-3)
        rule.stop(point, batch.gradient(point, 0, problem.n), 1.0, 0)
        assert rule.lower <= optimum + 1e-9 * max(1.0, abs(optimum))
        stats = rule.stats()
        assert stats["certificate"] == "lagrangian_bound"
        assert stats["gap"] == pytest.approx(rule.upper - rule.lower)
    # at the optimum the bound is tight: the rule stops there
    at_optimum = SnapshotRule(problem_arrays(problem, 0), problem, 1e-3)
    assert at_optimum.stop(solution, batch.gradient(solution, 0, problem.n), 1.0,
                           0) == "certificate"


def test_a_sampled_batch_decides_nothing():
    spec = unconstrained("logistic", 4)
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    batch = InProcessBatch(problem, SvrgOptions(), 4)
    rule = SnapshotRule(problem_arrays(problem, 0), problem, 1.0)
    assert rule.stop(np.zeros(problem.d), batch.gradient(np.zeros(problem.d), 0, 100), 1.0,
                     10**6) is None
    assert rule.stats() == {"certificate": "none"}


@pytest.mark.parametrize(("loss", "terms"), [("logistic", {}), ("logistic", {"l2": 0.01}),
                                             ("squared", {"l1": 0.05})])
def test_auto_stops_on_its_certificate_near_the_optimum(loss, terms):
    spec = unconstrained(loss, 5, **terms)
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    stats = result.stats
    assert stats["stopped_by"] == "certificate", stats
    assert stats["iterations"] < PLANNED
    assert stats["communication_rounds"] < stats["rounds_planned"]
    assert stats["lower_bound"] <= optimum + 1e-9 * max(1.0, abs(optimum))
    tolerance = 1e-3 * max(abs(optimum), 1e-12)
    assert optimum - 1e-7 <= result.projected.objective <= optimum + tolerance


def test_an_explicit_budget_runs_as_given():
    spec = unconstrained("logistic", 5, l2=0.01)
    spec["solver"]["iterations"] = 50_000
    stats = solve(spec).stats
    assert stats["stopped_by"] == "iterations" and stats["iterations"] == 50_000
    assert "lower_bound" not in stats and "certificate" not in stats


def test_without_a_certificate_the_estimate_decides():
    """l2 = 0 and an infinite box: the bound is -inf, so the doubling-stage estimate on the
    values of rounds ending at 2^k T_0 serial steps stops the run, here at the last of them
    (the schedule runs out otherwise)."""
    spec = unconstrained("squared", 7)
    del spec["bounds"]
    result = solve(spec)
    stats = result.stats
    assert stats["certificate"] == "none" and "lower_bound" not in stats
    assert stats["stopped_by"] == "converged", stats
    assert stats["estimated_gap"] <= 1e-3 and stats["iterations"] < PLANNED
    data = spec["objective"]["data"]
    x, y = np.array(data["features"]), np.array(data["labels"])
    residual = x @ np.linalg.lstsq(x, y, rcond=None)[0] - y
    optimum = 0.5 * residual @ residual / y.size
    assert optimum - 1e-9 <= result.projected.objective <= optimum * (1 + 1e-2)


def test_same_seed_same_result():
    first, second = (solve(unconstrained("logistic", 7, l1=0.01)) for _ in range(2))
    assert first.projected.solution == second.projected.solution
    assert first.stats["iterations"] == second.stats["iterations"]
    assert first.stats["lower_bound"] == second.stats["lower_bound"]
