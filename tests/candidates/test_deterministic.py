"""The deterministic model's rule (worker.candidates.deterministic) on TFCO's known example,
against the §6.2 rank heuristic, and its invariants."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from worker.candidates.best_single import best_single
from worker.candidates.deterministic import best_feasible

# google-research/tensorflow_constrained_optimization, candidates_test.py: four candidates,
# two constraints.
TFCO_OBJECTIVES = np.array([0.03053309, -0.06667082, 0.88355145, 0.46529806])
TFCO_CONSTRAINTS = np.array([[-0.60164551, 0.00371592], [0.36676229, -0.16392108],
                             [0.7856454, -0.59778071], [-0.8441711, -0.56908492]])


def worst(constraints: np.ndarray) -> np.ndarray:
    return np.maximum(constraints.max(axis=1), 0.0)


def test_tfco_example_the_one_feasible_candidate():
    # TFCO's find_best_candidate_index answers 3 without ranking the objective, and 1 when it
    # ranks it (the §6.2 heuristic); only candidate 3 satisfies both constraints.
    assert best_feasible(TFCO_OBJECTIVES, worst(TFCO_CONSTRAINTS), 1e-3) == 3
    assert best_single(TFCO_OBJECTIVES, TFCO_CONSTRAINTS) == 1
    assert worst(TFCO_CONSTRAINTS)[1] > 0.36
    # a looser tolerance admits candidate 0 (violation 0.0037), whose objective is lower
    assert best_feasible(TFCO_OBJECTIVES, worst(TFCO_CONSTRAINTS), 1e-2) == 0


def test_without_a_feasible_candidate_the_least_violation_wins():
    assert best_feasible(TFCO_OBJECTIVES[:3], worst(TFCO_CONSTRAINTS[:3]), 1e-3) == 0
    assert best_feasible(np.array([2.0, 1.0, 0.0]), np.array([0.5, 0.2, 0.2]), 1e-3) == 2


@given(arrays(np.float64, 12, elements=st.floats(-5, 5)),
       arrays(np.float64, 12, elements=st.floats(0, 1)), st.floats(0.0, 0.5))
def test_the_choice_is_feasible_and_least_among_the_feasible(objectives, violations, tolerance):
    chosen = best_feasible(objectives, violations, tolerance)
    feasible = violations <= tolerance
    if feasible.any():
        assert feasible[chosen] and objectives[chosen] == objectives[feasible].min()
    else:
        assert violations[chosen] == violations.min()
