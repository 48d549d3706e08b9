"""The Lagrangian bound: below the exact optimum (CVXPY) for any point and multipliers, and
its coordinate minima against a dense grid."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.specs import exact_optimum, random_spec
from worker.algorithms.bounds.dual_bound import coordinate_minima, lagrangian_bound
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

CASES = [("hinge", "mixed", 0.0, 0.0), ("hinge", "linear", 0.05, 0.1),
         ("logistic", "lattice", 0.0, 0.0), ("squared", "ordering_pairs", 0.02, 0.0),
         ("squared_hinge", "linear", 0.0, 0.2), ("quadratic", "mixed", 0.05, 0.1)]
OPTIMA = {}


def optimum_of(case):
    if case not in OPTIMA:
        spec = random_spec(case[0], case[1], 9, l1=case[2], l2=case[3])
        OPTIMA[case] = (compile_problem(parse_spec(spec), DataSource([], data_settings())),
                        exact_optimum(spec)[0])
    return OPTIMA[case]


@pytest.mark.parametrize("case", CASES, ids=["-".join(map(str, c)) for c in CASES])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([0.0, 0.01, 1.0, 10.0]))
def test_any_point_and_multipliers_give_a_bound_below_the_optimum(case, seed, spread):
    problem, optimum = optimum_of(case)
    rng = np.random.default_rng(seed)
    point = rng.uniform(problem.lower, problem.upper)
    multipliers = spread * rng.exponential(size=problem.m)
    hinge_weights = rng.uniform(size=problem.n) if case[0] == "hinge" else None
    bound = lagrangian_bound(problem, point, multipliers, hinge_weights)
    assert bound <= optimum + 1e-7 * (1 + abs(optimum))


@settings(max_examples=200, deadline=None)
@given(slope=st.floats(-5, 5), l1=st.sampled_from([0.0, 0.3, 2.0]),
       l2=st.sampled_from([0.0, 0.5, 3.0]), low=st.floats(-3, 1), width=st.floats(0, 4))
def test_the_coordinate_minima_are_the_minimum_over_the_interval(slope, l1, l2, low, width):
    grid = np.linspace(low, low + width, 2001)
    values = slope * grid + l1 * np.abs(grid) + 0.5 * l2 * grid**2
    (minimum,) = coordinate_minima(np.array([slope]), l1, l2, np.array([low]),
                                    np.array([low + width]))
    step = width / 2000
    lipschitz = abs(slope) + l1 + l2 * max(abs(low), abs(low + width))
    assert values.min() - lipschitz * step - 1e-12 <= minimum <= values.min() + 1e-12

