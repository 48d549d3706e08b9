"""The data of the Adult scale bench (:mod:`bench.adult_scale_data`): the svmlight and group
files hold the drawn rows in one order, their distinct rows counted are those rows, the
same seed writes the same bytes, and the spec solves on them; and its fairlearn side
(:mod:`bench.adult_scale_fairlearn`) fits such files in a process of its own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from bench import adult_scale_data as scaled
from bench import adult_scale_fairlearn as fairlearn_side
from worker import solve
from worker.datasets.adult import GROUPS, Split


@pytest.fixture(scope="module")
def source() -> scaled.Source:
    return scaled.Source()


@pytest.fixture(scope="module")
def written(source, tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("adult_scale")
    template = scaled.template_spec(source, cache, iterations=200, seed=0)
    scaled.generate(source, cache, 1, template)
    return cache / "x1"


def read_back(directory: Path) -> Split:
    features, labels = load_svmlight_file(str(directory / "features.svm"), zero_based=True)
    return Split(features.tocsr(), labels,
                 {name: np.load(directory / f"{name}.npy") for name in GROUPS})


def test_the_files_hold_the_training_files_row_count_of_encoded_rows(source, written):
    rows = read_back(written)
    assert rows.labels.shape == (source.file_rows,)
    assert set(np.unique(rows.labels)) == {-1.0, 1.0}
    assert set(np.unique(rows.features.data)) == {1.0}
    np.testing.assert_array_equal(rows.groups["female"] + rows.groups["male"], 1.0)
    record = json.loads((written / "generation.json").read_text())
    assert 0 < record["rows_rebinned"] < record["rows"] == source.file_rows


def test_the_distinct_rows_counted_are_the_written_rows(written):
    rows = read_back(written)
    distinct, counts = scaled.distinct_rows(written)
    assert counts.sum() == rows.labels.size
    keys, occurrences = np.unique(scaled.row_keys(rows), return_counts=True)
    np.testing.assert_array_equal(scaled.row_keys(distinct), keys)
    np.testing.assert_array_equal(counts, occurrences)


def test_the_same_seed_writes_the_same_rows_and_another_seed_others(source, written,
                                                                      tmp_path: Path):
    template = json.loads((written / "spec.json").read_text())
    for seed in (0, 1):
        scaled.generate(source, tmp_path / str(seed), 1, template, seed=seed)
    first = (written / "features.svm").read_bytes()
    assert (tmp_path / "0" / "x1" / "features.svm").read_bytes() == first
    assert (tmp_path / "1" / "x1" / "features.svm").read_bytes() != first


def test_the_spec_solves_on_the_files_with_its_four_rate_constraints(written):
    spec = json.loads((written / "spec.json").read_text())
    result = solve(spec, roots=[written])
    assert result.sizes.examples == 32_561
    assert result.sizes.constraints == 4
    assert sum(member.weight for member in result.mixture) == pytest.approx(1.0)


def test_fairlearn_fits_the_files_rows_in_its_own_process_and_is_scored(written, tmp_path):
    rows = read_back(written).rows(np.arange(3000))
    dump_svmlight_file(rows.features, rows.labels, str(tmp_path / "features.svm"),
                       zero_based=True)
    for name in GROUPS:
        np.save(tmp_path / f"{name}.npy", rows.groups[name])
    distinct, _ = scaled.distinct_rows(written)
    width = distinct.features.shape[1]
    row = fairlearn_side.run_fairlearn(tmp_path, width, {"train": rows}, timeout=600)
    assert "error" not in row, row.get("error")
    assert row["rows"] == 3000
    assert row["driver_peak_bytes"] >= row["fit_peak_bytes"] > 0
    assert row["process_wall_s"] > row["wall_s"] >= row["fit_s"] > 0
    assert sum(row["mixture_weights"]) == pytest.approx(1.0)
    assert 0 < row["train"]["error"] < 50
    assert set(row["train"]) == {"error", *GROUPS}


def test_the_sensitive_columns_are_sex_and_race_with_the_other_races_together():
    groups = {"female": np.array([1.0, 0.0, 0.0]), "black": np.array([1.0, 0.0, 0.0]),
              "white": np.array([0.0, 1.0, 0.0])}
    np.testing.assert_array_equal(fairlearn_side.sensitive_columns(groups),
                                  [["female", "black"], ["male", "white"], ["male", "other"]])
