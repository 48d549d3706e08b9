"""Tests of worker.datasets.adult's encoding and validation split: no degenerate bin on the
training file, one encoding for both files, and a disjoint, reproducible validation split."""

from __future__ import annotations

import numpy as np
import pytest

from worker.datasets import adult


@pytest.fixture(scope="module")
def files():
    """(training rows, test rows, train split, test split) with the default encoding."""
    rows = adult._read(adult.DATA / "adult.data"), adult._read(adult.DATA / "adult.test")
    return (*rows, *adult.load_adult())


def blocks(rows) -> dict[str, slice]:
    """Feature columns of each continuous column, in the encoding's order."""
    found, start = {}, 0
    for name, bins in adult.fit_bins(rows).items():
        found[name] = slice(start, start + bins.size)
        start += bins.size
    return found


def test_no_bin_is_degenerate_on_the_training_file(files):
    train_rows, _, train, _ = files
    n = len(train_rows)
    counts = np.asarray(train.features.sum(axis=0)).ravel()
    assert counts[-1] == n  # the intercept
    assert np.all(counts[:-1] > 0) and np.all(counts[:-1] < n), counts
    for name, columns in blocks(train_rows).items():
        assert np.all(counts[columns] >= 0.005 * n), (name, counts[columns])
    assert train.features.shape[1] == 125


def test_capital_columns_get_a_zero_bin_and_bins_of_the_nonzero_values(files):
    train_rows, _, train, _ = files
    for name, columns in blocks(train_rows).items():
        values = adult._column(train_rows, name)
        bins = train.features[:, columns].toarray().argmax(axis=1)
        if name in adult.CAPITAL:
            assert np.array_equal(bins == 0, values == 0), name
            assert columns.stop - columns.start == 1 + adult.QUANTILE_BINS
        # bins follow the value order: a larger value never gets a lower bin
        order = np.argsort(values, kind="stable")
        assert np.all(np.diff(bins[order]) >= 0), name


def test_every_row_has_one_bin_per_continuous_column_and_one_value_per_category(files):
    train_rows, test_rows, train, test = files
    for rows, split in ((train_rows, train), (test_rows, test)):
        known = [sum(row[name] != "?" for name in adult.CATEGORICAL) for row in rows]
        expected = len(adult.CONTINUOUS) + len(adult.CAPITAL) + np.array(known) + 1
        assert np.array_equal(np.asarray(split.features.sum(axis=1)).ravel(), expected)


def test_the_test_file_gets_the_training_files_encoding(files):
    train_rows, test_rows, train, test = files
    assert test.features.shape[1] == train.features.shape[1]
    for name, columns in blocks(train_rows).items():
        both = {}
        for rows, split in ((train_rows, train), (test_rows, test)):
            bins = split.features[:, columns].toarray().argmax(axis=1)
            for value, found in zip(adult._column(rows, name), bins, strict=True):
                assert both.setdefault(value, found) == found, (name, value)
        assert np.all(np.diff([both[value] for value in sorted(both)]) >= 0), name
    # a categorical value sets the same column in both files
    offset = sum(bins.size for bins in adult.fit_bins(train_rows).values())
    columns = {}
    for rows, split in ((train_rows, train), (test_rows, test)):
        for r, row in enumerate(rows):
            found = sorted(c for c in split.features[r].indices if offset <= c < offset + 99)
            known = [(name, row[name]) for name in adult.CATEGORICAL if row[name] != "?"]
            for key, column in zip(known, found, strict=True):
                assert columns.setdefault(key, column) == column, key
    assert len(set(columns.values())) == len(columns) == 99


def test_capital_bins_one_is_a9a_and_zero_leaves_the_columns_out():
    a9a, _ = adult.load_adult(capital_bins=1)
    without, _ = adult.load_adult(capital_bins=0)
    assert a9a.features.shape[1] == 99 + 13 + 2 + 2 + 1
    assert without.features.shape[1] == 99 + 13 + 1


def test_validation_split_is_disjoint_complete_and_reproducible(files):
    _, _, train, _ = files
    n = train.labels.shape[0]
    fit, held = adult.validation_rows(n)
    assert held.size == round(0.2 * n) and fit.size + held.size == n
    assert np.intersect1d(fit, held).size == 0
    assert np.array_equal(np.union1d(fit, held), np.arange(n))
    again = adult.validation_rows(n)
    assert np.array_equal(again[0], fit) and np.array_equal(again[1], held)
    assert not np.array_equal(adult.validation_rows(n, seed=1)[1], held)
    fit_split, held_split = adult.validation_split(train)
    assert (fit_split.features != train.features[fit]).nnz == 0
    assert np.array_equal(held_split.labels, train.labels[held])
    for name, vector in train.groups.items():
        assert np.array_equal(held_split.groups[name], vector[held])
        assert np.array_equal(fit_split.groups[name], vector[fit])


def test_true_positive_rates_and_ratios(files):
    _, _, train, _ = files
    positive = train.labels > 0
    predicted = (positive & (train.groups["male"] > 0)).astype(float)
    overall, rates = adult.true_positive_rates(train, predicted)
    assert overall == pytest.approx(train.groups["male"][positive].mean())
    assert rates["male"] == 1.0 and rates["female"] == 0.0
    assert adult.true_positive_ratios(train, predicted)["male"] == pytest.approx(1 / overall)
    nothing = adult.true_positive_ratios(train, np.zeros_like(predicted))
    assert all(np.isnan(ratio) for ratio in nothing.values())
