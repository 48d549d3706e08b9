"""The algorithm registry: the spec's names, the auto rule's choices, unknown names."""

from __future__ import annotations

import pytest

from tests.specs import random_spec
from worker import solve
from worker.algorithms.registry import ALGORITHMS, chosen
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import ALGORITHMS as SPEC_ALGORITHMS
from worker.spec.models import parse_spec


def test_the_spec_offers_exactly_the_registered_algorithms():
    assert set(SPEC_ALGORITHMS) == set(ALGORITHMS) | {"auto"}


@pytest.mark.parametrize(("loss", "constraints", "expected"), [
    ("hinge", "ordering_pairs", "exact_qp"), ("logistic", "lattice", "exact_conic"),
    ("squared", "none", "lbfgsb"), ("hinge", "mixed", "exact_qp"),
])
def test_auto_picks_a_registered_algorithm(loss, constraints, expected):
    problem = compile_problem(parse_spec(random_spec(loss, constraints, 1)),
                              DataSource([], data_settings()))
    assert chosen(problem, "auto").name == expected in ALGORITHMS


@pytest.mark.parametrize("name", sorted(set(ALGORITHMS) - {"lagrangian", "proxy_lagrangian",
                                                          "midtouch", "epro_sgd",
                                                          "epro_orda", "lbfgsb"}))
def test_every_general_algorithm_runs_through_the_pipeline(name):
    spec = random_spec("hinge", "ordering_chain", 2, iterations=2000)
    spec["solver"]["algorithm"] = name
    result = solve(spec)
    assert result.algorithm == name and result.projected.status == "optimal"


@pytest.mark.parametrize("name", ["midtouch", "epro_sgd", "epro_orda", "exact_conic"])
def test_strongly_convex_algorithms_run_through_the_pipeline(name):
    spec = random_spec("logistic", "ordering_chain", 2, l2=0.5, l1=0.01, iterations=2000)
    spec["solver"]["algorithm"] = name
    assert solve(spec).algorithm == name
