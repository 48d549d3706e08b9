"""Tests of worker.datasets.digits: the fixed stratified split, the four corruptions, the npz
files read back by the product's reader, and the specs pointing at them."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pytest
from sklearn.datasets import load_digits

from tests.data.helpers import MATRIX, VECTOR, isolated_data_cache
from worker.data.read import read_examples
from worker.datasets import digits
from worker.model_types import MODEL_TYPES
from worker.problem.compile import DataSource
from worker.problem.compile_network import compile_network_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec

SIDES = digits.SIDE * digits.SIDE


@pytest.fixture(scope="module")
def sets() -> digits.DigitsSets:
    return digits.corrupted_digits()


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, Path]:
    return digits.write_digits(tmp_path_factory.mktemp("digits"), digits.corrupted_digits())


def pairs(sets: digits.DigitsSets) -> dict[str, digits.Pair]:
    return {"clean": sets.clean, **sets.sets}


def test_split_is_stratified_70_30_and_the_same_rows_in_every_set(sets):
    _, labels = digits.load_images()
    per_digit = np.bincount(labels, minlength=10)
    train = np.bincount(sets.clean.train.labels, minlength=10)
    test = np.bincount(sets.clean.test.labels, minlength=10)
    assert (train.sum(), test.sum()) == (1257, 540)
    np.testing.assert_array_equal(train + test, per_digit)
    assert np.all(np.abs(train - digits.TRAIN_FRACTION * per_digit) <= 1), train
    for name, pair in sets.sets.items():
        np.testing.assert_array_equal(pair.train.labels, sets.clean.train.labels, name)
        np.testing.assert_array_equal(pair.test.labels, sets.clean.test.labels, name)


def test_validation_split_holds_out_a_stratified_fifth_of_each_training_set(sets):
    held = digits.validation_split(sets)
    train = np.bincount(sets.clean.train.labels, minlength=10)
    for name, pair in held.sets.items():
        whole = sets.sets[name].train
        fit, validation = pair.train, pair.test
        assert fit.labels.size + validation.labels.size == whole.labels.size, name
        counts = np.bincount(validation.labels, minlength=10)
        assert np.all(np.abs(counts - digits.VALIDATION_FRACTION * train) <= 1), name
        rows = {row.tobytes() for row in whole.features}
        assert {row.tobytes() for row in fit.features} <= rows, name
        assert {row.tobytes() for row in validation.features} <= rows, name
        assert not {row.tobytes() for row in fit.features} & \
            {row.tobytes() for row in validation.features}, name
        np.testing.assert_array_equal(fit.labels, held.sets["noise"].train.labels, name)
    np.testing.assert_array_equal(
        held.union.features, np.vstack([held.sets[name].train.features for name in digits.SETS]))
    assert held.clean is sets.clean


def test_features_are_float_pixels_in_the_unit_interval_and_labels_are_digits(sets):
    for name, pair in pairs(sets).items():
        for split in (pair.train, pair.test):
            assert split.features.dtype == np.float64, name
            assert split.features.shape == (split.labels.shape[0], SIDES), name
            assert split.features.min() >= 0.0 and split.features.max() <= 1.0, name
            assert split.labels.dtype.kind == "i", name
            assert set(np.unique(split.labels)) == set(range(10)), name


def test_clean_features_are_the_raw_pixels_over_16_at_disjoint_rows(sets):
    raw = load_digits()
    images, labels = digits.load_images()
    np.testing.assert_array_equal(images, raw.images / 16.0)
    np.testing.assert_array_equal(labels, raw.target)
    train, test = digits.split_rows(labels)
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(1797))
    flat = raw.images.reshape(-1, SIDES) / 16.0
    np.testing.assert_array_equal(sets.clean.train.features, flat[train])
    np.testing.assert_array_equal(sets.clean.test.features, flat[test])


@pytest.mark.parametrize("name", digits.SETS)
def test_every_corruption_changes_most_images(sets, name):
    pair, clean = sets.sets[name], sets.clean
    for split, original in ((pair.train, clean.train), (pair.test, clean.test)):
        changed = np.any(split.features != original.features, axis=1)
        assert changed.mean() > 0.5, (name, changed.mean())


@pytest.mark.parametrize("name", ["noise", "rotation", "blur"])
def test_dense_corruptions_change_every_image(sets, name):
    changed = np.any(sets.sets[name].train.features != sets.clean.train.features, axis=1)
    assert changed.all(), np.flatnonzero(~changed)[:10]


def test_occlusion_changes_one_square_to_a_single_value(sets):
    occluded, clean = sets.sets["occlusion"].train, sets.clean.train
    for row in range(occluded.labels.shape[0]):
        image = occluded.features[row].reshape(digits.SIDE, digits.SIDE)
        rows, columns = np.nonzero(image != clean.features[row].reshape(image.shape))
        if rows.size == 0:
            continue
        assert np.ptp(rows) < digits.PATCH_SIDE and np.ptp(columns) < digits.PATCH_SIDE, row
        assert np.unique(image[rows, columns]).tolist() in ([0.0], [1.0]), row


def test_rotation_keeps_the_ink_near_its_total(sets):
    rotated, clean = sets.sets["rotation"].test, sets.clean.test
    ratio = rotated.features.sum(axis=1) / clean.features.sum(axis=1)
    assert 0.7 < np.median(ratio) < 1.1, np.median(ratio)


def test_blur_lowers_contrast(sets):
    blurred, clean = sets.sets["blur"].train, sets.clean.train
    assert np.all(blurred.features.std(axis=1) < clean.features.std(axis=1))


def test_the_union_stacks_the_four_training_sets_in_order(sets):
    np.testing.assert_array_equal(sets.union.features, np.vstack(
        [sets.sets[name].train.features for name in digits.SETS]))
    np.testing.assert_array_equal(sets.union.labels, np.tile(sets.clean.train.labels, 4))


def test_same_seed_same_bytes_other_seed_other_images(sets):
    again, other = digits.corrupted_digits(0), digits.corrupted_digits(1)
    for name in digits.SETS:
        for part in ("train", "test"):
            first, second = getattr(sets.sets[name], part), getattr(again.sets[name], part)
            assert first.features.tobytes() == second.features.tobytes(), (name, part)
            assert first.labels.tobytes() == second.labels.tobytes(), (name, part)
        assert np.any(other.sets[name].train.features != sets.sets[name].train.features), name
    np.testing.assert_array_equal(other.clean.train.labels, sets.clean.train.labels)


def test_noise_has_the_documented_deviation(sets):
    """Around mid-grey pixels clipping starts beyond 1.75 deviations, so the median absolute
    noise (0.6745 deviations) is untouched by it."""
    noise = sets.sets["noise"].train.features - sets.clean.train.features
    mid_grey = np.isin(sets.clean.train.features, np.array([7, 8, 9]) / 16)
    deviation = np.median(np.abs(noise[mid_grey])) / 0.6745
    assert abs(deviation - digits.NOISE_STD) < 0.01, deviation


@pytest.mark.usefixtures(isolated_data_cache.__name__)
def test_npz_files_read_back_through_the_product_reader(sets, paths):
    expected = {f"{name}_{part}": getattr(pair, part)
                for name, pair in sets.sets.items() for part in ("train", "test")}
    expected["union_train"] = sets.union
    assert set(paths) == set(expected)
    roots = [next(iter(paths.values())).parent]
    for key, split in expected.items():
        assert paths[key].is_absolute() and paths[key].name == f"{key}.npz"
        with np.load(paths[key]) as archive:
            assert sorted(archive.files) == ["features", "labels"]
            assert archive["labels"].dtype == np.int64, key
        uri = paths[key].as_uri()
        features, labels = read_examples(
            MATRIX.validate_python({"uri": uri, "key": "features"}),
            VECTOR.validate_python({"uri": uri,
                                    "key": "labels"}), key, roots=roots, settings=data_settings())
        assert features.shape == (split.labels.shape[0], SIDES), key
        assert labels.shape == split.labels.shape, key
        np.testing.assert_array_equal(features, split.features)
        np.testing.assert_array_equal(labels, split.labels)
        assert np.all(labels == np.round(labels)) and set(np.unique(labels)) == set(range(10))


def uri_path(uri: str) -> Path:
    parsed = urlparse(uri)
    assert parsed.scheme == "file", uri
    return Path(unquote(parsed.path))


def test_robust_spec_is_the_max_of_the_four_training_losses(paths):
    spec = digits.robust_spec(paths, hidden=[16, 8], iterations=300, seed=3)
    assert spec["model"] == {"type": "mlp", "hidden": [16, 8], "activation": "relu",
                             "init_seed": 3}
    assert spec["solver"] == {"algorithm": "lagrangian", "iterations": 300, "candidates": 100,
                              "seed": 3}
    assert spec["objective"]["type"] == "max_of"
    terms = spec["objective"]["terms"]
    assert [term["loss"] for term in terms] == ["softmax_cross_entropy"] * 4
    files = [uri_path(term["data"]["features"]["uri"]) for term in terms]
    assert files == [paths[f"{name}_train"] for name in digits.SETS]
    assert all(term["data"]["labels"]["uri"] == term["data"]["features"]["uri"]
               for term in terms)
    model = parse_spec(spec)
    problem = compile_network_problem(
        model, DataSource([paths["union_train"].parent], data_settings()),
        MODEL_TYPES[model.model.type])
    assert problem.robust and problem.network.sizes == (64, 16, 8, 10)
    assert [term.n for term in problem.terms] == [1257] * 4


def test_union_spec_trains_the_same_network_on_the_union(paths):
    robust, union = digits.robust_spec(paths), digits.union_spec(paths)
    assert union["model"] == robust["model"] == {
        "type": "mlp", "hidden": [1024], "activation": "relu", "init_seed": 0}
    assert union["solver"] == robust["solver"]
    assert robust["solver"]["iterations"] == 50_000
    objective = union["objective"]
    assert (objective["type"], objective["loss"]) == ("empirical_risk", "softmax_cross_entropy")
    path = uri_path(objective["data"]["features"]["uri"])
    assert path == paths["union_train"] and path.is_file()


def test_missing_scikit_learn_is_named_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r"scikit-learn: pip install 'lighttouch\[bench\]'"):
        digits.load_images()
