"""Every algorithm against an exact solver (CVXPY + Clarabel) on small random problems (the
LightTouch family's member that ``auto`` would pick if these were too big for an exact method,
:func:`~worker.algorithms.method_choice.iterative_method`).

The returned projected mean must be within 1% (relative, or 1e-3 absolute) of the exact
optimum with max violation <= 1e-6, and the mixture must have at most m + 1 members.
"""

from __future__ import annotations

import itertools

import pytest

from tests.specs import CONSTRAINT_KINDS, LOSSES, exact_optimum, random_spec
from worker import solve
from worker.algorithms.method_choice import iterative_method
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

CASES = list(itertools.product(LOSSES, CONSTRAINT_KINDS))


def assert_near_optimal(spec: dict) -> None:
    result = solve(spec)
    optimum, _ = exact_optimum(spec)
    projected = result.projected
    assert projected is not None and projected.status == "optimal"
    assert projected.max_violation <= 1e-6
    gap = projected.objective - optimum
    assert gap <= max(1e-2 * abs(optimum), 1e-3), (projected.objective, optimum)
    assert gap >= -1e-6 * max(1.0, abs(optimum))  # feasible, so never below the optimum
    assert 1 <= len(result.mixture) <= result.sizes.constraints + 1
    assert sum(member.weight for member in result.mixture) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("loss", "constraints"), CASES, ids=["-".join(c) for c in CASES])
def test_lighttouch_reaches_the_exact_optimum(loss, constraints):
    seed = CASES.index((loss, constraints))
    spec = random_spec(loss, constraints, seed, iterations=300_000)
    spec["solver"]["algorithm"] = iterative_method(
        compile_problem(parse_spec(spec), DataSource([], data_settings())))
    assert_near_optimal(spec)


@pytest.mark.parametrize("algorithm", ["fulltouch", "midtouch", "lighttouch"])
@pytest.mark.parametrize("loss", ["logistic", "squared", "quadratic"])
def test_strongly_convex_problems(algorithm, loss):
    spec = random_spec(loss, "mixed", 7, l2=0.5, iterations=300_000)
    spec["solver"]["algorithm"] = algorithm
    assert_near_optimal(spec)


@pytest.mark.parametrize("constraints", ["ordering_chain", "linear"])
def test_projected_sgd_baseline(constraints):
    spec = random_spec("hinge", constraints, 3, iterations=20_000)
    spec["solver"]["algorithm"] = "projected_sgd"
    assert_near_optimal(spec)


@pytest.mark.parametrize("options", [{"p_update": "dense"}, {"aggregate": 4},
                                     {"minibatch": {"k_f": 4, "k_g": 3, "k_p": 2}}],
                         ids=["dense", "aggregated", "fixed-minibatch"])
def test_lighttouch_variants(options):
    spec = random_spec("logistic", "mixed", 11, iterations=300_000)
    spec["solver"].update(options)
    assert_near_optimal(spec)
