"""Paper property (LightTouch §6.2): on a monotone-lattice ranking problem LightTouch reaches
FullTouch's objective with far fewer constraint checks."""

from __future__ import annotations

import json
from pathlib import Path

from worker.algorithms.registry import run_algorithm
from worker.algorithms.run.arrays import problem_arrays
from worker.algorithms.run.options import SolverOptions
from worker.candidates.scores import evaluate_point
from worker.problem.compile import DataSource, compile_problem
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import parse_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lattice_ranking.json"


def projected_objectives(problem, algorithm: str, iterations: int) -> list[tuple[int, float]]:
    """(constraint checks, f(Π_g(average))) at each snapshot, paper §6.2's measure."""
    options = SolverOptions(algorithm=algorithm, iterations=iterations, gamma=1.0, eta_w=16.0,
                            eta_p=1 / 16, seed=0, candidates=40)
    candidates = run_algorithm(problem, options).candidates
    arrays = problem_arrays(problem, 0)
    points = []
    for solution, kind, checks in zip(candidates.solutions, candidates.kinds,
                                      candidates.checks, strict=True):
        if kind == "average":
            feasible = project(solution, problem.constraints, problem.lower, problem.upper)
            points.append((checks, evaluate_point(arrays, problem, feasible.solution)[0]))
    return points


def test_lighttouch_needs_ten_times_fewer_checks_than_fulltouch():
    problem = compile_problem(parse_spec(json.loads(EXAMPLE.read_text())),
                              DataSource([EXAMPLE.parent], data_settings()))
    assert problem.m == 192
    full = projected_objectives(problem, "fulltouch", 100_000)
    full_checks, full_objective = full[-1]
    light = projected_objectives(problem, "lighttouch", 400_000)
    reached = [checks for checks, objective in light if objective <= full_objective]
    assert reached, f"LightTouch never reached {full_objective}: {light[-1]}"
    assert full_checks >= 10 * reached[0], (full_checks, reached[0])
