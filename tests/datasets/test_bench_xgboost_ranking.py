"""The XGBoost peer of the scale-out bench (:mod:`bench.xgboost_ranking`): its raw inputs are
the pairs the LightTouch tables interpolate, every pair is one query group of two items, and
a tie counts as a wrong order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench import xgboost_ranking as ranking
from worker.datasets.lattice import make_ranking_problem
from worker.datasets.simplex import simplex_interpolation


def test_raw_pairs_are_the_pairs_the_lattice_tables_hold():
    positive, negative, _ = make_ranking_problem(500, 4, seed=3)
    x_positive, x_negative = ranking.raw_pairs(500, 4, seed=3)
    assert (simplex_interpolation(x_positive) != positive).nnz == 0
    assert (simplex_interpolation(x_negative) != negative).nnz == 0
    other, _ = ranking.raw_pairs(500, 4, seed=4)
    assert not np.allclose(other, x_positive)


def test_each_pair_is_a_query_group_of_two_items():
    x_positive, x_negative = np.arange(6.0).reshape(3, 2), -np.arange(6.0).reshape(3, 2)
    features, relevance, qid = ranking.query_groups(x_positive, x_negative)
    np.testing.assert_array_equal(features[0::2], x_positive)
    np.testing.assert_array_equal(features[1::2], x_negative)
    np.testing.assert_array_equal(relevance, [1, 0, 1, 0, 1, 0])
    np.testing.assert_array_equal(qid, [0, 0, 1, 1, 2, 2])


def test_unequal_sides_are_refused_with_their_shapes():
    with pytest.raises(ValueError, match=r"x_positive has shape \(3, 2\), x_negative \(2, 2\)"):
        ranking.query_groups(np.zeros((3, 2)), np.zeros((2, 2)))


def test_the_written_table_is_copies_of_the_groups(tmp_path: Path):
    path = ranking.write_groups(tmp_path / "groups.npy", 3, 50, scale=2)
    features, _, _ = ranking.query_groups(*ranking.raw_pairs(50, 3, ranking.TRAINING_SEED))
    table = np.load(path)
    assert table.shape == (200, 3)
    np.testing.assert_array_equal(table[:100], features.astype(np.float32))
    np.testing.assert_array_equal(table[100:], table[:100])


def test_accuracy_counts_ties_as_wrong():
    found = ranking.pairwise_accuracy(np.array([2.0, 1.0, 1.0, 0.0]),
                                      np.array([1.0, 1.0, 2.0, -1.0]))
    assert found == {"heldout_accuracy": 0.5, "heldout_ties": 0.25}


def test_the_truths_lattice_orders_most_held_out_pairs():
    from worker.datasets.lattice import make_truth

    found = ranking.lattice_accuracy(make_truth(3, 0).lattice_values().tolist(), 3)
    assert 0.7 < found["heldout_accuracy"] <= ranking.truth_accuracy(3)["heldout_accuracy"]
