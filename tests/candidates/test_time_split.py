"""The job's time split: the gain rate that ends a stage, the polish stopping "slow" and the
dual ascent "flat" on a lattice ranking problem, gamma's fits stopping at the deadline, and a
solve whose stages end near its time limit."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from tests.problems import random_problem
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.penalty import (
    GAMMA_FREE_NONZEROS,
    FitBudget,
    FitStopped,
    multiplier_mass,
)
from worker.candidates import lower_bound
from worker.candidates.dual_ascent import FLAT_REFITS, REFIT_EVERY, ascended_bound
from worker.candidates.dual_certificate import margin_weights
from worker.candidates.gain_rate import TINY, gain_rate, is_slow
from worker.candidates.hinge_lp import signed_rows
from worker.candidates.polish import polish
from worker.datasets.lattice import write_problem
from worker.pipeline.polishing import ALGORITHM_SHARE
from worker.pipeline.solve import solve
from worker.problem.compile import DataSource, compile_problem
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import parse_spec


def test_the_gain_rate_is_the_relative_change_per_second_of_the_last_intervals():
    falling = [(0.0, 1.0), (2.0, 0.9), (3.0, 0.8)]
    assert gain_rate(falling) == pytest.approx(0.1 / 0.8 / 1.0)
    assert gain_rate(falling, window=2) == pytest.approx(0.2 / 0.8 / 3.0)
    rising = [(0.0, 0.2), (1.0, 0.3), (2.0, 0.3), (3.0, 0.3), (5.0, 0.4)]
    assert gain_rate(rising, window=3) == pytest.approx(0.1 / 0.4 / 4.0)
    assert gain_rate(rising[:3], window=3) == math.inf          # too few points yet
    assert gain_rate([(1.0, 0.5), (1.0, 0.4)]) == math.inf     # no time passed
    assert gain_rate([(0.0, 0.1), (1.0, 0.0)]) == pytest.approx(0.1 / TINY)
    assert gain_rate([(0.0, -0.2), (2.0, -0.1)]) == pytest.approx(0.1 / 0.1 / 2.0)


def test_a_stage_is_slow_below_its_threshold_and_never_with_none():
    points = [(0.0, 0.4), (10.0, 0.396)]                      # 1e-3 of 0.396 per second
    assert is_slow(points, 1.1e-3) and not is_slow(points, 0.9e-3)
    assert not is_slow(points, 0.0)
    assert not is_slow(points[:1], 1e9)                        # one point: no rate yet
    flat = [(0.0, 0.3), (1.0, 0.3), (2.0, 0.3), (3.0, 0.3)]
    assert is_slow(flat, 1e-12, window=3) and not is_slow(flat, 1e-12, window=4)


@pytest.fixture(scope="module")
def lattice(tmp_path_factory):
    """The paper's lattice ranking problem at 2^6 coordinates with 3,000 pairs."""
    directory = tmp_path_factory.mktemp("lattice")
    spec = json.loads(write_problem(directory, 3_000, D=6, seed=0).read_text())
    return compile_problem(parse_spec(spec), DataSource([directory], data_settings()))


def start_of(problem) -> np.ndarray:
    """The projection of a random point: feasible, far from the optimum."""
    point = np.random.default_rng(0).normal(scale=3.0, size=problem.d)
    return project(point, problem.constraints, problem.lower, problem.upper).solution


def later(seconds: float = 60.0) -> float:
    return time.perf_counter() + seconds


def test_the_polish_stops_slow_after_a_round_below_its_rate(lattice):
    start = start_of(lattice)
    slow = polish(lattice, start, later(), 1e-12, examples=16, slow_rate=1e9)
    assert (slow.status, slow.rounds) == ("slow", 1)
    assert slow.objective < slow.start_objective             # the round's point is kept
    patient = polish(lattice, start, later(), 1e-12, examples=16)
    assert patient.status != "slow" and patient.rounds > 1
    assert patient.objective < slow.objective


def test_the_ascent_stops_flat_after_its_refits_rise_too_slowly(lattice):
    signed = signed_rows(lattice)
    alpha = margin_weights(signed.margins(start_of(lattice)))
    flat = ascended_bound(lattice, signed, alpha, 60.0, steps=1000, flat_gain=1e9)
    assert (flat.stopped, flat.refits) == ("flat", FLAT_REFITS + 1)
    steady = ascended_bound(lattice, signed, alpha, 60.0, steps=5 * REFIT_EVERY,
                            flat_gain=0.0)
    assert (steady.stopped, steady.refits) == ("steps", 5)
    assert steady.value >= flat.value
    timed = ascended_bound(lattice, signed, alpha, 0.0)
    assert (timed.stopped, timed.refits) == ("time_limit", 1)


def test_gammas_fit_stops_at_its_budget_and_fits_as_before_within_it():
    problem = random_problem("hinge", "lattice", d=8, n=200, seed=1, bound=10.0)
    arrays = problem_arrays(problem, problem.m)
    w = project(np.random.default_rng(1).normal(size=problem.d), problem.constraints,
                problem.lower, problem.upper).solution
    with pytest.raises(FitStopped):
        multiplier_mass(arrays, problem, w, FitBudget(deadline=time.perf_counter() - 1.0))
    spent = FitBudget(nonzeros=1)
    with pytest.raises(FitStopped):
        multiplier_mass(arrays, problem, w, spent)
    assert spent.used > 1
    within = FitBudget(deadline=later())
    assert multiplier_mass(arrays, problem, w, within) == pytest.approx(
        multiplier_mass(arrays, problem, w), rel=1e-9)
    assert 0 < within.used < GAMMA_FREE_NONZEROS


def test_a_short_time_limit_ends_every_stage_near_it(tmp_path, monkeypatch):
    monkeypatch.setattr(lower_bound, "PDLP_ROWS", 1)      # the bound of an order at scale
    spec = json.loads(write_problem(tmp_path, 100_000, D=10, seed=0).read_text())
    limit = 10.0
    spec["solver"] = {"time_limit_s": limit}
    stats = solve(spec, roots=[tmp_path]).stats
    assert (stats["polish_method"], stats["lower_bound_status"]) == ("primal_dual", "ascent")
    assert stats["polish_status"] in ("time_limit", "tolerance")
    assert stats["lower_bound_stopped"] in ("time_limit", "steps", "flat")
    assert stats["solve_s"] <= ALGORITHM_SHARE * limit + 2.0
    assert stats["load_s"] + stats["solve_s"] + stats["polish_s"] <= limit + 2.0
    # the bound may take its floor of seconds past the time limit, no more
    assert stats["wall_s"] <= limit + lower_bound.MIN_SECONDS + 2.0
