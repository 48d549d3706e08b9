"""``eta_w: "auto"`` and ``iterations: "auto"`` against the exact optimum: lattice shapes,
the data's scale, the stopping rule."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from worker import solve
from worker.algorithms.run.stopping import estimated_gap
from worker.pipeline.polishing import ALGORITHM_TOLERANCE
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec


def ranking_spec(shape: list[int], increasing: list[int], *, seed: int, scale: float = 1.0,
                 box: float | None = None, n: int = 3000) -> dict:
    """Pairwise ranking with a monotone truth on a lattice of ``shape`` (C order): each row
    spreads unit mass over 3 random vertices; features times ``scale``, box [-box, box]
    (default 4 / scale). LightTouch, the step rule's subject (``auto`` would solve this
    small program exactly)."""
    box = 4 / scale if box is None else box
    rng = np.random.default_rng(seed)
    grid = np.indices(shape).reshape(len(shape), -1)
    truth = grid[increasing].sum(axis=0) / max(1, sum(shape[a] - 1 for a in increasing))
    d = truth.size

    def rows() -> sp.csr_matrix:
        cols = rng.integers(d, size=(n, 3))
        weights = rng.dirichlet(np.ones(3), size=n)
        return sp.csr_matrix((weights.ravel(), (np.repeat(np.arange(n), 3), cols.ravel())),
                             shape=(n, d))

    first, second = rows(), rows()
    noise = 0.15 * rng.normal(size=n)
    swap = (first - second) @ truth + noise < 0
    positive = sp.vstack([first[i] if not s else second[i] for i, s in enumerate(swap)])
    negative = sp.vstack([second[i] if not s else first[i] for i, s in enumerate(swap)])

    def coo(matrix: sp.csr_matrix) -> dict:
        matrix = (scale * matrix).tocoo()
        return {"format": "coo", "shape": list(matrix.shape), "row": matrix.row.tolist(),
                "col": matrix.col.tolist(), "data": matrix.data.tolist()}

    return {"spec_version": 1, "dimension": d, "bounds": {"lower": -box, "upper": box},
            "objective": {"type": "empirical_risk", "loss": "pairwise_hinge",
                          "data": {"positive": coo(positive), "negative": coo(negative)}},
            "constraints": [{"type": "monotone_lattice", "shape": shape,
                             "increasing": increasing}],
            "solver": {"algorithm": "lighttouch", "iterations": 200_000, "seed": seed}}


def relative_gap(spec: dict) -> tuple[float, dict]:
    """(projected objective / exact optimum - 1, stats) with the exact optimum by Clarabel."""
    problem = compile_problem(parse_spec(spec), DataSource([], data_settings()))
    rows = sp.diags(problem.objective.labels) @ problem.objective.features
    w = cp.Variable(problem.d)
    exact = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - rows @ w)) / rows.shape[0]),
                       [w >= problem.lower, w <= problem.upper,
                        problem.constraints.matrix @ w <= problem.constraints.rhs])
    exact.solve(solver="CLARABEL")
    result = solve(spec)
    assert result.projected.status == "optimal"
    return result.projected.objective / exact.value - 1.0, result.stats


@pytest.mark.parametrize(("shape", "increasing"), [
    ([3, 4, 2], [0, 2]), ([2] * 6, list(range(6))), ([6, 6], [1]), ([4, 3, 3], [0, 1, 2]),
], ids=["3x4x2-some-axes", "2^6", "6x6-one-axis", "4x3x3"])
def test_defaults_reach_the_exact_optimum_on_lattices(shape, increasing):
    gap, stats = relative_gap(ranking_spec(shape, increasing, seed=len(shape)))
    assert -1e-6 <= gap <= 0.02, gap
    assert stats["eta_w_warmup"] in ("dog", "adagrad")
    assert stats["eta_w_measured"] > 0 and stats["warmup_radius"] > 0


@pytest.mark.parametrize("scale", [0.01, 100.0])
def test_the_data_scale_does_not_change_the_quality(scale):
    # Features times c and the box divided by c: the same problem in other units. (Not
    # exactly: the unit-norm constraint rows keep their scale, so gamma must follow c.)
    gap, _ = relative_gap(ranking_spec([3, 4, 2], [0, 2], seed=5, scale=scale))
    reference, _ = relative_gap(ranking_spec([3, 4, 2], [0, 2], seed=5))
    assert -1e-6 <= gap <= 0.02 and abs(gap - reference) <= 0.01, (gap, reference)


@pytest.mark.parametrize("scale", [0.01, 100.0])
def test_scaled_features_in_a_fixed_box_reach_the_optimum(scale):
    gap, _ = relative_gap(ranking_spec([3, 4, 2], [0, 2], seed=6, scale=scale, box=4.0))
    assert -1e-6 <= gap <= 0.02, gap


def test_a_given_eta_w_is_used_as_is():
    spec = ranking_spec([3, 4, 2], [0, 2], seed=3)
    spec["solver"].update(eta_w=2.5, gamma=1.0)
    stats = solve(spec).stats
    assert stats["eta_w"] == 2.5 and "eta_w_warmup" not in stats


def test_auto_iterations_stop_at_the_tolerance():
    spec = ranking_spec([3, 4, 2], [0, 2], seed=7)
    del spec["solver"]["iterations"]                     # "auto" is the default
    spec["solver"]["tolerance"] = 3e-3
    gap, stats = relative_gap(spec)
    loop_tolerance = ALGORITHM_TOLERANCE * 3e-3        # the hinge polish takes the rest
    assert (stats["stopped_by"] == "converged" and stats["estimated_gap"] <= loop_tolerance
            or stats["stopped_by"] == "certificate"
            and stats["certified_gap"] <= loop_tolerance)
    assert stats["stages"] >= 1 and -1e-6 <= gap <= 1e-2, (gap, stats)


def test_auto_iterations_stop_at_the_time_limit():
    spec = ranking_spec([3, 4, 2], [0, 2], seed=8)
    spec["solver"].update(iterations="auto", tolerance=1e-12, time_limit_s=1.0)
    stats = solve(spec).stats
    assert stats["stopped_by"] == "time_limit" and stats["solve_s"] < 10.0


def test_a_time_limit_before_three_stages_reports_no_gap_estimate():
    spec = ranking_spec([3, 4, 2], [0, 2], seed=8)
    spec["solver"].update(iterations="auto", tolerance=1e-12, time_limit_s=0.01)
    stats = solve(spec).stats
    assert stats["stopped_by"] == "time_limit" and stats["stages"] < 3
    assert "estimated_gap" not in stats


def test_a_fixed_budget_says_it_ran_its_iterations():
    spec = ranking_spec([3, 4, 2], [0, 2], seed=9)
    assert solve(spec).stats["stopped_by"] == "iterations"


@pytest.mark.parametrize(("values", "expected"), [
    ([1.0, 0.9], math.inf),                      # too few stages to tell
    ([1.0, 0.9, 0.89], 0.1 / 0.89 / (math.sqrt(2) - 1)),
    ([1.0, 1.0, 1.01], 0.0),                     # no improvement left
])
def test_estimated_gap(values, expected):
    assert estimated_gap(values) == pytest.approx(expected)
