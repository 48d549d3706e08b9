"""UCI Adult as binary features, and the equal-opportunity spec of Cotter et al. (2019) §6.2.

Preprocessing in the spirit of Platt (1998), as the paper does: ``fnlwgt`` dropped, each
categorical column one-hot ('?' is no category: all zeros), each continuous column one-hot
over its training quintile bins, plus a constant feature for the intercept; about 120
binary features. Labels: ``>50K`` is +1. Groups (0/1 vectors): female, male, black, white.

The spec asks, for each group G, TPR(G) >= 0.95 TPR(all), i.e. the positive prediction rate
on G's positively labelled examples is at least 95% of that on all positive examples.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

#: The shipped copy of UCI Adult (CC BY 4.0; see uci_adult/README.md).
DATA = Path(__file__).resolve().parent / "uci_adult"
CONTINUOUS = ("age", "education-num", "capital-gain", "capital-loss", "hours-per-week")
CATEGORICAL = ("workclass", "education", "marital-status", "occupation", "relationship",
               "race", "sex", "native-country")
GROUPS = {"female": ("sex", "Female"), "male": ("sex", "Male"),
          "black": ("race", "Black"), "white": ("race", "White")}
RATIO = 0.95


@dataclass(frozen=True)
class Split:
    """Binary features (n, d) CSR, ±1 labels (n,), group name -> 0/1 vector (n,)."""

    features: sp.csr_matrix
    labels: np.ndarray
    groups: dict[str, np.ndarray]


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        rows = csv.DictReader(handle, skipinitialspace=True)
        return [{k.strip(): v.strip() for k, v in row.items()} for row in rows if row["Y"]]


def _encode(rows, columns, edges) -> sp.csr_matrix:
    """One-hot of categorical values (``columns``: name -> values) and continuous bins."""
    blocks = []
    for name in CONTINUOUS:
        values = np.array([float(row[name]) for row in rows])
        bins = np.searchsorted(edges[name], values, side="right")
        blocks.append(np.eye(len(edges[name]) + 1)[bins])
    for name in CATEGORICAL:
        index = {value: k for k, value in enumerate(columns[name])}
        block = np.zeros((len(rows), len(index)))
        for r, row in enumerate(rows):
            if row[name] in index:
                block[r, index[row[name]]] = 1.0
        blocks.append(block)
    blocks.append(np.ones((len(rows), 1)))
    return sp.csr_matrix(np.hstack(blocks))


def _split(rows, columns, edges) -> Split:
    labels = np.array([1.0 if row["Y"].rstrip(".") == ">50K" else -1.0 for row in rows])
    groups = {name: np.array([float(row[column] == value) for row in rows])
              for name, (column, value) in GROUPS.items()}
    return Split(_encode(rows, columns, edges), labels, groups)


def load_adult(directory: Path = DATA) -> tuple[Split, Split]:
    """(train, test) with the encoding fitted on the training file."""
    train, test = _read(directory / "adult.data"), _read(directory / "adult.test")
    columns = {name: sorted({row[name] for row in train} - {"?"}) for name in CATEGORICAL}
    edges = {}
    for name in CONTINUOUS:
        values = np.array([float(row[name]) for row in train])
        edges[name] = np.unique(np.quantile(values, [0.2, 0.4, 0.6, 0.8]))
    return _split(train, columns, edges), _split(test, columns, edges)


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


def true_positive_ratios(split: Split, predicted: np.ndarray) -> dict[str, float]:
    """TPR(G) / TPR(all) per group; ``predicted`` (n,) is each example's probability of a
    positive prediction (0/1 for one model, the mixture's weight on positive for a mixture)."""
    positive = split.labels > 0
    overall = predicted[positive].mean()
    return {name: float(predicted[positive & (vector > 0)].mean() / overall)
            for name, vector in split.groups.items()}
