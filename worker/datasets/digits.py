"""Four corrupted versions of scikit-learn's digits, and the robust spec of Cotter et al. (2019)
§6.1.

§6.1 minimizes the largest of four cross-entropy losses, one per corrupted version of a digit
data set, in the spirit of Chen et al. (2017), whose four sets are corrupted MNIST. Here the
images are scikit-learn's bundled digits (``sklearn.datasets.load_digits``: 1,797 images of
8x8 pixels, values 0..16, labels 0..9; shipped with scikit-learn, nothing is downloaded).
scikit-learn is in the ``dev`` and ``bench`` extras only, so it is imported when the images
are loaded.

* Split: stratified by label, 70% train / 30% test, seed 0 (``SPLIT_SEED``), fixed whatever
  the corruption seed: 1,257 training images (122..128 per digit) and 540 test images
  (52..55 per digit).
* Pixels are divided by 16 (to [0, 1]); each corruption is applied to every image of both
  splits and the result clipped to [0, 1]. Features are the 64 pixels in row-major order
  (float64), labels the digits as integers 0..9.
* Each set draws from its own ``numpy.random.Generator`` seeded with ``[seed, k]`` (``k`` the
  set's number 1..4, ``seed`` the argument of :func:`corrupted_digits`, default 0). Image
  ``i`` of the data set takes the ``i``-th draws, so its corruption does not depend on the
  split.

=====  ===========  ============================================================================
set    name         corruption
=====  ===========  ============================================================================
1      noise        additive Gaussian noise, standard deviation 0.25 per pixel
2      rotation     rotation about the centre by an angle uniform in [-30°, 30°]
                    (``scipy.ndimage.rotate``, ``reshape=False``, bilinear, outside = 0)
3      occlusion    a 2x2 square at a uniform position inside the image, every pixel of it set
                    to 0 or to 1 (equally likely)
4      blur         Gaussian blur of standard deviation uniform in [0.6, 1.0] pixel
                    (``gaussian_filter``, outside = 0), then lower contrast: each pixel moved
                    toward the image's mean, keeping a share of its distance uniform in
                    [0.4, 0.6]
=====  ===========  ============================================================================

The strengths were chosen so that each corruption hurts a linear softmax classifier trained
on clean images (scikit-learn ``LogisticRegression``, default C = 1), while one trained on
the corrupted set itself stays well under 20% test error (``bench/digits_baseline.py``,
``bench/results/digits_baseline.json``; the measured errors are in docs/benchmarks.md).
Stronger occlusion patches and noise left a linear model trained on those sets above that.
The sets differ in difficulty, which is what the max of §6.1 is for: the union's linear model is
worst on rotation.

:func:`write_digits` writes each set and split as an ``.npz`` archive of two arrays,
``features`` (n, 64) float64 and ``labels`` (n,) int64, plus the union of the four training
sets; a spec names each member by ``key`` (``{"uri": ..., "key": "features"}`` and
``"key": "labels"``). :func:`robust_spec` is §6.1's problem
(one hidden layer of 1,024 ReLU units, 50,000 iterations, 100 candidates) and
:func:`union_spec` its baseline, the same network trained on the union.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import ndimage

from worker.datasets.examples import Examples

#: Image side in pixels, the largest raw pixel value, and the split (module docstring).
SIDE = 8
MAX_VALUE = 16.0
TRAIN_FRACTION = 0.7
SPLIT_SEED = 0
#: The share of the training images :func:`validation_split` holds out.
VALIDATION_FRACTION = 0.2
#: Corruption strengths (module docstring).
NOISE_STD = 0.25
MAX_ANGLE = 30.0
PATCH_SIDE = 2
BLUR_SIGMA = (0.6, 1.0)
CONTRAST = (0.4, 0.6)
#: The key of the training union in :func:`write_digits`'s files.
UNION = "union"
#: The §6.1 network and run.
HIDDEN = (1024,)
ITERATIONS = 50_000
CANDIDATES = 100


@dataclass(frozen=True)
class Split(Examples):
    """Pixels in [0, 1] (n, 64) float64, row-major per image, and digits (n,) int64."""


@dataclass(frozen=True)
class Pair:
    """The training and test split of one version of the data set."""

    train: Split
    test: Split


@dataclass(frozen=True)
class DigitsSets:
    """The clean images, each corrupted set by name (:data:`SETS` order) and the union of
    the corrupted training splits (4 x 1,257 rows, set by set)."""

    clean: Pair
    sets: dict[str, Pair]
    union: Split


def load_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as (images (1797, 8, 8) float64 in [0, 1], labels (1797,) int64).

    Raises
    ------
    ImportError
        scikit-learn is not installed.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError("the digits data set ships with scikit-learn: pip install "
                          "'lighttouch[bench]' (or scikit-learn itself)") from None
    digits = load_digits()
    return digits.images / MAX_VALUE, digits.target.astype(np.int64)


def split_rows(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) positions: stratified by label, :data:`TRAIN_FRACTION` training, seed
    :data:`SPLIT_SEED` (scikit-learn's ``train_test_split``)."""
    from sklearn.model_selection import train_test_split
    return train_test_split(np.arange(labels.shape[0]), train_size=TRAIN_FRACTION,
                            stratify=labels, random_state=SPLIT_SEED)


def add_noise(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Set 1: ``images`` (n, 8, 8) plus N(0, NOISE_STD^2) per pixel (not clipped)."""
    return images + rng.normal(0.0, NOISE_STD, images.shape)


def rotate(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Set 2: each image (n, 8, 8) turned about its centre by an angle uniform in
    [-MAX_ANGLE, MAX_ANGLE] degrees; bilinear, pixels from outside the image are 0."""
    angles = rng.uniform(-MAX_ANGLE, MAX_ANGLE, images.shape[0])
    return np.stack([ndimage.rotate(image, angle, reshape=False, order=1, mode="constant")
                     for image, angle in zip(images, angles, strict=True)])


def occlude(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Set 3: in each image (n, 8, 8) a square of side :data:`PATCH_SIDE` at a uniform
    position inside the image, set to 0 or 1 (equally likely)."""
    n = images.shape[0]
    top, left = rng.integers(0, SIDE - PATCH_SIDE + 1, (2, n))
    values = rng.integers(0, 2, n).astype(np.float64)
    index = np.arange(SIDE)
    rows = (index >= top[:, None]) & (index < top[:, None] + PATCH_SIDE)
    columns = (index >= left[:, None]) & (index < left[:, None] + PATCH_SIDE)
    patch = rows[:, :, None] & columns[:, None, :]
    return np.where(patch, values[:, None, None], images)


def blur(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Set 4: each image (n, 8, 8) blurred (Gaussian of standard deviation uniform in
    :data:`BLUR_SIGMA` pixels, outside = 0), then moved toward its mean:
    ``mean + c * (blurred - mean)``, ``c`` uniform in :data:`CONTRAST`."""
    sigmas = rng.uniform(*BLUR_SIGMA, images.shape[0])
    blurred = np.stack([ndimage.gaussian_filter(image, sigma, mode="constant")
                        for image, sigma in zip(images, sigmas, strict=True)])
    mean = blurred.mean(axis=(1, 2), keepdims=True)
    contrast = rng.uniform(*CONTRAST, images.shape[0])[:, None, None]
    return mean + contrast * (blurred - mean)


#: Set name -> corruption, in set order (set k is the k-th), and the names alone.
CORRUPTIONS = {"noise": add_noise, "rotation": rotate, "occlusion": occlude, "blur": blur}
SETS = tuple(CORRUPTIONS)


def _pair(images: np.ndarray, labels: np.ndarray, train: np.ndarray,
          test: np.ndarray) -> Pair:
    """The split of ``images`` (n, 8, 8) as flat features."""
    every = Split(images.reshape(images.shape[0], SIDE * SIDE), labels)
    return Pair(every.rows(train), every.rows(test))


def corrupted_digits(seed: int = 0) -> DigitsSets:
    """The clean split and the four corrupted sets; set k draws from
    ``numpy.random.default_rng([seed, k])`` (the split itself does not depend on ``seed``)."""
    images, labels = load_images()
    train, test = split_rows(labels)
    sets = {}
    for k, (name, corrupt) in enumerate(CORRUPTIONS.items(), start=1):
        corrupted = np.clip(corrupt(images, np.random.default_rng([seed, k])), 0.0, 1.0)
        sets[name] = _pair(corrupted, labels, train, test)
    return DigitsSets(_pair(images, labels, train, test), sets,
                      Split.stacked([pair.train for pair in sets.values()]))


def validation_split(digits: DigitsSets, fraction: float = VALIDATION_FRACTION,
                     seed: int = SPLIT_SEED) -> DigitsSets:
    """The sets with each training split divided in two, stratified by label with
    scikit-learn's ``train_test_split`` (``fraction`` held out, ``random_state=seed``; the
    same images in every set): each :class:`Pair` becomes (fit, validation) and the union
    is that of the fit parts. The clean pair is left as it is.

    §6.2 of Cotter et al. (2019) holds out 20% of the training data to choose step sizes.
    """
    from sklearn.model_selection import train_test_split
    labels = digits.clean.train.labels
    fit, held = train_test_split(np.arange(labels.shape[0]), test_size=fraction,
                                 stratify=labels, random_state=seed)
    sets = {name: Pair(pair.train.rows(fit), pair.train.rows(held))
            for name, pair in digits.sets.items()}
    return DigitsSets(digits.clean, sets, Split.stacked([pair.train for pair in sets.values()]))


def write_digits(directory: Path, digits: DigitsSets) -> dict[str, Path]:
    """Write ``{name}_{train,test}.npz`` for each set and ``union_train.npz`` into
    ``directory`` (created if missing); each archive holds ``features`` (n, 64) float64 and
    ``labels`` (n,) int64; ``digits`` is :func:`corrupted_digits`'s sets or a
    :func:`validation_split` of them (whose fit parts are then the ``train`` files).

    Returns
    -------
    dict of str to Path
        ``"noise_train"``, ``"noise_test"``, ... , ``"union_train"`` -> absolute file path.
    """
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    splits = {f"{name}_{part}": getattr(pair, part)
              for name, pair in digits.sets.items() for part in ("train", "test")}
    splits[f"{UNION}_train"] = digits.union
    paths = {}
    for key, split in splits.items():
        paths[key] = directory / f"{key}.npz"
        np.savez(paths[key], features=split.features, labels=split.labels)
    return paths


def _risk(path: Path) -> dict:
    """The softmax cross-entropy of the examples in the ``.npz`` file at ``path``."""
    uri = Path(path).resolve().as_uri()
    return {"type": "empirical_risk", "loss": "softmax_cross_entropy",
            "data": {"features": {"uri": uri, "key": "features"},
                     "labels": {"uri": uri, "key": "labels"}}}


def _spec(name: str, objective: dict, hidden: Sequence[int], iterations: int,
          seed: int) -> dict:
    """A spec training the §6.1 network (ReLU layers of ``hidden`` units) on ``objective``."""
    return {"name": name,
            "model": {"type": "mlp", "hidden": list(hidden), "activation": "relu",
                      "init_seed": seed},
            "objective": objective,
            "solver": {"algorithm": "lagrangian", "iterations": iterations,
                       "candidates": CANDIDATES, "seed": seed}}


def robust_spec(paths: dict[str, Path], hidden: Sequence[int] = HIDDEN,
                iterations: int = ITERATIONS, seed: int = 0) -> dict:
    """§6.1's problem: minimize the largest of the four sets' training cross-entropies
    (``paths`` as :func:`write_digits` returns them)."""
    terms = [_risk(paths[f"{name}_train"]) for name in SETS]
    return _spec("robust digits", {"type": "max_of", "terms": terms}, hidden, iterations,
                 seed)


def union_spec(paths: dict[str, Path], hidden: Sequence[int] = HIDDEN,
               iterations: int = ITERATIONS, seed: int = 0) -> dict:
    """§6.1's baseline: the same network minimizing the cross-entropy on the union of the
    four training sets."""
    return _spec("union digits", _risk(paths[f"{UNION}_train"]), hidden, iterations, seed)
