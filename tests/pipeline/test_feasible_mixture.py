"""A run stopped early whose snapshots all violate the lattice still ends with a feasible
mixture: the mean's projection joins the candidates and the shrinking LP picks it."""

from __future__ import annotations

import pytest

from tests.specs import exact_optimum, random_spec
from worker.pipeline.solve import solve
from worker.spec.models import parse_spec


def _short_run(seed: int, iterations: int, eta_w: float) -> dict:
    """LightTouch with a large step, stopped after ``iterations`` on a 16-coordinate lattice
    (no polish, no bound: the mixture is the shrinking LP's alone)."""
    spec = random_spec("hinge", "lattice", seed, d=16, n=200, iterations=iterations)
    spec["solver"].update(algorithm="lighttouch", polish=False, eta_w=eta_w)
    spec["output"] = {"lower_bound": False}
    return spec


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_mixture_of_violating_snapshots_is_replaced_by_a_feasible_one(seed):
    spec = _short_run(seed, 200, 3.0)
    tolerance = parse_spec(spec).solver.tolerance
    result = solve(spec)
    assert result.projected.max_violation <= tolerance
    assert result.expected.max_violation <= tolerance
    assert "projected" in [member.kind for member in result.mixture]
    optimum, _ = exact_optimum(spec)
    # a feasible mixture of a convex problem is worth at least its optimum
    assert result.expected.objective >= optimum - 1e-6


def test_a_feasible_mixture_is_left_as_the_shrinking_lp_made_it():
    result = solve(_short_run(0, 20, 1.0))
    assert result.expected.max_violation <= parse_spec(_short_run(0, 20, 1.0)).solver.tolerance
    assert "projected" not in [member.kind for member in result.mixture]
