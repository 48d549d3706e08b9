"""UCI Adult as binary features, and the equal-opportunity spec of Cotter et al. (2019) §6.2.

The encoding follows Platt (1998), which the paper uses ("processed ... as in Platt (1998),
yielding 120 binary features") and LIBSVM ships as ``a9a``: 123 binary features from the 14
columns, the continuous ones binned at quantiles. 123 is the 99 categorical values
below plus 24 for the six continuous columns, which fits five quantile bins each for age,
fnlwgt, education-num and hours-per-week and a zero/nonzero pair for each capital column
(a9a does not name its features; the paper does not list its 120). Here, fitted on the
training file only:

* ``fnlwgt`` is dropped (a sampling weight, not a property of the person; the paper drops it).
* Each categorical column is one-hot over the values seen in training: workclass 8,
  education 16, marital-status 7, occupation 14, relationship 6, race 5, sex 2,
  native-country 41 (99 features). '?' (missing) is no category: the row's block is all
  zeros, so a missing value scores like the intercept alone.
* age, education-num and hours-per-week are one-hot over their training quintile bins
  (cut points at the 20/40/60/80% quantiles; equal cut points merge, so education-num and
  hours-per-week, whose values repeat a lot, get 4 bins: 5 + 4 + 4 features). A bin holds
  the values from its lower cut point (inclusive) to the next.
* capital-gain and capital-loss are 0 for 92% and 95% of the rows, so all their quintile
  cut points are 0 and plain quintile bins put every row in one bin (the column carries no
  information). They get a zero bin plus ``capital_bins`` quantile bins of the *nonzero*
  training values (default 5: 6 features each; ``capital_bins=1`` is a9a's zero/nonzero
  pair, ``0`` drops the columns). The finer bins matter: in the training file 98.7% of the
  rows with a gain of 7,688 or more are >50K and none with a gain below 3,103, which a9a's
  nonzero bin lumps together (bench/adult_fairness.py measures each choice).
* A constant feature for the intercept.

With the defaults that is 99 + 13 + 12 + 1 = 125 binary features (a9a's layout without fnlwgt
would be 118 and the intercept), and no bin is empty or holds every training row. Labels:
``>50K`` is +1. Groups (0/1 vectors): female, male, black, white. :func:`validation_split`
holds out 20% of the training rows (fixed seed) for choosing step sizes, as §6.2 does.

The spec asks, for each group G, TPR(G) >= 0.95 TPR(all), i.e. the positive prediction rate
on G's positively labelled examples is at least 95% of that on all positive examples.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from worker.datasets.examples import Examples

#: The shipped copy of UCI Adult (CC BY 4.0; see uci_adult/README.md).
DATA = Path(__file__).resolve().parent / "uci_adult"
#: Continuous columns binned at their training quantiles, and the mostly-zero ones.
CONTINUOUS = ("age", "education-num", "hours-per-week")
CAPITAL = ("capital-gain", "capital-loss")
QUANTILE_BINS = 5
CATEGORICAL = ("workclass", "education", "marital-status", "occupation", "relationship",
               "race", "sex", "native-country")
GROUPS = {"female": ("sex", "Female"), "male": ("sex", "Male"),
          "black": ("race", "Black"), "white": ("race", "White")}
RATIO = 0.95
#: The share of training rows held out for choosing step sizes, and its seed (§6.2).
VALIDATION_FRACTION = 0.2
VALIDATION_SEED = 0


@dataclass(frozen=True)
class Split(Examples):
    """Binary features (n, d) CSR, ±1 labels (n,), group name -> 0/1 vector (n,)."""

    groups: dict[str, np.ndarray]


@dataclass(frozen=True)
class Bins:
    """One-hot bins of a continuous column: ``edges`` are the lower cut points of bins 1..;
    with ``zero_bin``, 0 is a bin of its own (bin 0) and ``edges`` split the nonzero values."""

    edges: np.ndarray
    zero_bin: bool = False

    @property
    def size(self) -> int:
        """Number of bins (features)."""
        return len(self.edges) + 1 + int(self.zero_bin)

    def index(self, values: np.ndarray) -> np.ndarray:
        """Each value's bin, 0 .. size - 1."""
        bins = np.searchsorted(self.edges, values, side="right")
        if self.zero_bin:
            bins = np.where(values == 0, 0, bins + 1)
        return bins


def quantile_bins(values: np.ndarray, bins: int, zero_bin: bool = False) -> Bins:
    """Cut points at the 1/bins .. (bins-1)/bins quantiles of ``values`` (of the nonzero ones
    with ``zero_bin``); equal cut points merge, so no bin is empty on ``values``."""
    if zero_bin:
        values = values[values != 0]
    edges = np.quantile(values, np.arange(1, bins) / bins) if bins > 1 else np.zeros(0)
    return Bins(np.unique(edges), zero_bin)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        rows = csv.DictReader(handle, skipinitialspace=True)
        return [{k.strip(): v.strip() for k, v in row.items()} for row in rows if row["Y"]]


def _column(rows, name: str) -> np.ndarray:
    return np.array([float(row[name]) for row in rows])


def _encode(rows, columns: dict[str, list[str]], bins: dict[str, Bins]) -> sp.csr_matrix:
    """One-hot of continuous bins (``bins``: name -> Bins) and of categorical values
    (``columns``: name -> values), then the intercept."""
    blocks = [np.eye(column.size)[column.index(_column(rows, name))]
              for name, column in bins.items()]
    for name in CATEGORICAL:
        index = {value: k for k, value in enumerate(columns[name])}
        block = np.zeros((len(rows), len(index)))
        for r, row in enumerate(rows):
            if row[name] in index:
                block[r, index[row[name]]] = 1.0
        blocks.append(block)
    blocks.append(np.ones((len(rows), 1)))
    return sp.csr_matrix(np.hstack(blocks))


def _split(rows, columns, bins) -> Split:
    labels = np.array([1.0 if row["Y"].rstrip(".") == ">50K" else -1.0 for row in rows])
    groups = {name: np.array([float(row[column] == value) for row in rows])
              for name, (column, value) in GROUPS.items()}
    return Split(_encode(rows, columns, bins), labels, groups)


def fit_bins(rows, capital_bins: int = QUANTILE_BINS) -> dict[str, Bins]:
    """The continuous columns' bins on ``rows`` (the training file): quintiles, and for the
    capital columns a zero bin plus ``capital_bins`` quantile bins of the nonzero values
    (0: the capital columns are left out)."""
    bins = {name: quantile_bins(_column(rows, name), QUANTILE_BINS) for name in CONTINUOUS}
    if capital_bins > 0:
        bins.update({name: quantile_bins(_column(rows, name), capital_bins, zero_bin=True)
                     for name in CAPITAL})
    return bins


def load_adult(directory: Path = DATA, *, capital_bins: int = QUANTILE_BINS
               ) -> tuple[Split, Split]:
    """(train, test) with the encoding fitted on the training file (see the module notes;
    ``capital_bins`` as in :func:`fit_bins`)."""
    train, test = _read(directory / "adult.data"), _read(directory / "adult.test")
    columns = {name: sorted({row[name] for row in train} - {"?"}) for name in CATEGORICAL}
    bins = fit_bins(train, capital_bins)
    return _split(train, columns, bins), _split(test, columns, bins)


def validation_rows(n: int, fraction: float = VALIDATION_FRACTION,
                    seed: int = VALIDATION_SEED) -> tuple[np.ndarray, np.ndarray]:
    """(fit, validation) positions among ``n`` rows: a uniformly random ``round(fraction n)``
    of them (fixed by ``seed``) held out; both ascending."""
    held = np.zeros(n, dtype=bool)
    held[np.random.default_rng(seed).permutation(n)[:round(fraction * n)]] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def validation_split(train: Split, fraction: float = VALIDATION_FRACTION,
                     seed: int = VALIDATION_SEED) -> tuple[Split, Split]:
    """(fit, validation) examples of ``train`` at :func:`validation_rows`."""
    fit, held = validation_rows(train.labels.shape[0], fraction, seed)
    return train.rows(fit), train.rows(held)


def equal_opportunity_constraints(ratio: float = RATIO) -> list[dict]:
    """TPR(G) >= ratio * TPR(all) for every group G, as spec rate constraints."""
    return [{"type": "rate", "lhs": {"metric": "true_positive_rate", "group": name},
             "op": ">=", "rhs": {"metric": "true_positive_rate", "group": None,
                                 "scale": ratio}}
            for name in GROUPS]


def adult_spec(train: Split, directory: Path, *, algorithm: str, iterations: int,
               constrained: bool = True, seed: int = 0, **solver) -> dict:
    """A spec over ``train`` whose data are npz/npy files written into ``directory``
    (solve with ``roots=[directory]``)."""
    directory.mkdir(parents=True, exist_ok=True)
    sp.save_npz(directory / "features.npz", train.features)
    np.save(directory / "labels.npy", train.labels)
    for name, vector in train.groups.items():
        np.save(directory / f"{name}.npy", vector)

    def ref(name: str, fmt: str) -> dict:
        return {"uri": (directory / name).resolve().as_uri(), "format": fmt}

    data = {"features": ref("features.npz", "npz"), "labels": ref("labels.npy", "npy"),
            "groups": {name: ref(f"{name}.npy", "npy") for name in train.groups}}
    return {"spec_version": 1, "name": "adult equal opportunity",
            "objective": {"type": "empirical_risk", "loss": "hinge", "data": data},
            "constraints": equal_opportunity_constraints() if constrained else [],
            "solver": {"algorithm": algorithm, "iterations": iterations, "seed": seed,
                       **solver},
            "output": {"mixture": True, "project": False}}


def true_positive_rates(split: Split, predicted: np.ndarray) -> tuple[float, dict[str, float]]:
    """(TPR(all), group name -> TPR(G)); ``predicted`` (n,) is each example's probability of
    a positive prediction (0/1 for one model, the mixture's weight on positive for a
    mixture)."""
    positive = split.labels > 0
    return float(predicted[positive].mean()), {
        name: float(predicted[positive & (vector > 0)].mean())
        for name, vector in split.groups.items()}


def true_positive_ratios(split: Split, predicted: np.ndarray) -> dict[str, float]:
    """TPR(G) / TPR(all) per group (:func:`true_positive_rates`; nan when nothing is
    predicted positive)."""
    overall, rates = true_positive_rates(split, predicted)
    return {name: rate / overall if overall > 0 else float("nan")
            for name, rate in rates.items()}
