"""The exact and quasi-Newton methods against CVXPY (Clarabel) on small random problems: their
one answer is the optimum, their certificate a valid bound, their refusals clear."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from tests.problems import random_problem
from tests.specs import CONSTRAINT_KINDS, exact_optimum, random_spec
from worker import solve
from worker.algorithms.bounds.smooth_part import objective_value
from worker.algorithms.exact.exact import run_exact_conic, run_exact_qp
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.options import SolverOptions
from worker.algorithms.runners.lbfgsb import run_lbfgsb
from worker.errors import SolverError, SpecError
from worker.pipeline.scoring import LinearScoring
from worker.problem.compile import DataSource, compile_problem
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import parse_spec

REGULARIZERS = [(0.0, 0.0), (0.05, 0.0), (0.0, 0.3), (0.02, 0.1)]
EXACT_CASES = [(loss, kind, l1, l2) for loss, kind, (l1, l2) in itertools.product(
    ("hinge", "squared", "squared_hinge", "pairwise_hinge", "quadratic", "logistic"),
    (*CONSTRAINT_KINDS, "none"), REGULARIZERS)]
RUNNERS = {"exact_qp": run_exact_qp, "exact_conic": run_exact_conic, "lbfgsb": run_lbfgsb}


def run(name: str, spec: dict, seconds: float = 60.0):
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    return problem, RUNNERS[name](problem, SolverOptions(), None, time.perf_counter() + seconds)


def assert_exact(problem, trajectory, spec: dict) -> None:
    optimum, _ = exact_optimum(spec)
    (w,) = trajectory.candidates.solutions
    scale = 1.0 + abs(optimum)
    assert objective_value(problem.objective, w) == pytest.approx(optimum, abs=1e-6 * scale)
    assert problem.constraints.values(w).max(initial=0.0) <= 1e-6
    assert trajectory.as_stats()["stopped_by"] == "optimal"
    bound = trajectory.as_stats()["lower_bound"]
    assert optimum - 1e-3 * scale <= bound <= optimum + 1e-7 * scale   # valid, within tolerance


@pytest.mark.parametrize(("loss", "constraints", "l1", "l2"), EXACT_CASES,
                         ids=[f"{c[0]}-{c[1]}-l1={c[2]}-l2={c[3]}" for c in EXACT_CASES])
def test_the_exact_method_finds_the_optimum_and_certifies_it(loss, constraints, l1, l2):
    spec = random_spec(loss, constraints, 100 + EXACT_CASES.index((loss, constraints, l1, l2)),
                       l1=l1, l2=l2)
    name = "exact_conic" if loss == "logistic" else "exact_qp"
    problem, trajectory = run(name, spec)
    assert_exact(problem, trajectory, spec)
    assert trajectory.as_stats()["solver"] == "clarabel"


@pytest.mark.parametrize("loss", ["hinge", "squared", "quadratic"])
def test_exact_conic_also_solves_lps_and_qps(loss):
    spec = random_spec(loss, "mixed", 5, l2=0.1)
    problem, trajectory = run("exact_conic", spec)
    assert_exact(problem, trajectory, spec)


SMOOTH_CASES = list(itertools.product(("logistic", "squared", "squared_hinge", "quadratic"),
                                      REGULARIZERS))


@pytest.mark.parametrize(("loss", "weights"), SMOOTH_CASES,
                         ids=[f"{c[0]}-l1={c[1][0]}-l2={c[1][1]}" for c in SMOOTH_CASES])
def test_lbfgsb_finds_the_optimum_over_the_box(loss, weights):
    l1, l2 = weights
    spec = random_spec(loss, "none", SMOOTH_CASES.index((loss, weights)), l1=l1, l2=l2)
    problem, trajectory = run("lbfgsb", spec)
    assert_exact(problem, trajectory, spec)


def test_lbfgsb_with_l1_keeps_a_box_that_excludes_zero():
    spec = random_spec("logistic", "none", 4, l1=0.05)
    spec["bounds"] = {"lower": 0.25, "upper": 1.0}
    problem, trajectory = run("lbfgsb", spec)
    (w,) = trajectory.candidates.solutions
    assert w.min() >= 0.25
    assert_exact(problem, trajectory, spec)


def test_without_a_finite_box_or_l2_lbfgsb_reports_no_certificate_but_the_optimum():
    problem = random_problem("logistic", "none", seed=3, bound=np.inf)
    trajectory = run_lbfgsb(problem, SolverOptions(), None, time.perf_counter() + 60)
    assert trajectory.as_stats()["certificate"] in ("none", "lagrangian_bound")
    assert trajectory.as_stats()["stopped_by"] == "optimal"


def test_a_deadline_that_has_passed_stops_lbfgsb_with_time_limit():
    problem = random_problem("logistic", "none", seed=3)
    trajectory = run_lbfgsb(problem, SolverOptions(), None, time.perf_counter() - 1.0)
    assert trajectory.as_stats()["stopped_by"] == "time_limit"
    (w,) = trajectory.candidates.solutions
    assert not w.any()                                           # the start, w = clip(0)


@pytest.mark.parametrize(("name", "loss", "constraints", "message"), [
    ("exact_qp", "logistic", "linear", r"exact_qp cannot take the logistic loss \(it has no LP "
                                       r"or QP form\); methods that can: auto, .*exact_conic"),
    ("lbfgsb", "hinge", "none", r"lbfgsb cannot take the hinge loss \(it is not smooth\)"),
    ("lbfgsb", "logistic", "linear", "lbfgsb takes smooth objectives whose only constraint "
                                     "is the box"),
])
def test_a_method_refuses_what_it_cannot_solve_naming_the_field(name, loss, constraints,
                                                                message):
    spec = random_spec(loss, constraints, 1)
    spec["solver"]["algorithm"] = name
    with pytest.raises(SpecError, match="solver.algorithm: " + message):
        solve(spec)


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_infeasible_constraints_fail_with_a_clear_error(loss):
    spec = random_spec(loss, "none", 2)
    spec["constraints"] = [{"type": "linear", "A": [[1.0] + [0.0] * 7, [-1.0] + [0.0] * 7],
                            "b": [-0.5, -0.5]}]                        # w0 <= -0.5, w0 >= 0.5
    spec["solver"]["algorithm"] = "exact_conic"
    with pytest.raises(SolverError, match="no point of the box satisfies every constraint"):
        solve(spec)


@pytest.mark.parametrize(("loss", "constraints", "name"), [
    ("hinge", "lattice", "exact_qp"), ("logistic", "mixed", "exact_conic"),
    ("squared", "none", "lbfgsb")])
def test_through_the_pipeline_the_answer_is_a_one_member_mixture(loss, constraints, name):
    spec = random_spec(loss, constraints, 6)
    spec["solver"] = {"algorithm": name}
    result = solve(spec)
    (member,) = result.mixture
    assert result.algorithm == name and member.kind == "exact" and member.weight == 1.0
    assert result.stats["method_reason"] == "solver.algorithm"
    assert result.stats["stopped_by"] == "optimal" and result.stats["gap"] >= -1e-7
    assert "polish_status" not in result.stats and "lower_bound_status" not in result.stats


def test_an_exact_answer_is_its_own_projection_and_a_point_outside_is_projected():
    spec = random_spec("quadratic", "mixed", 8, l2=0.1)
    spec["solver"] = {"algorithm": "exact_qp"}
    exact = solve(spec)
    assert (exact.projected.method, exact.projected.status) == ("feasible", "optimal")
    assert exact.projected.solution == exact.mean.solution
    assert exact.projected.max_violation <= 1e-7
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    scoring = LinearScoring(problem, problem_arrays(problem, 1))
    outside = np.array(exact.mean.solution) + 0.5
    projection = scoring.project(outside)
    assert projection.method in ("isotonic", "qp") and projection.status == "optimal"
    assert projection.solution == pytest.approx(
        project(outside, problem.constraints, problem.lower, problem.upper).solution)
