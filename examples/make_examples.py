"""Regenerate the example specs in this directory (deterministic; data inline as data: URIs)
and the table of new rows the README's quick start scores.

    python examples/make_examples.py

* ``lattice_ranking.json``: a 2^6 monotone lattice (d = 64, m = 192 monotonicity constraints)
  with pairwise hinge loss on 4,000 synthetic pairs, the LightTouch paper's §6 shape in small.
* ``constrained_qp.json``: a quadratic program with ~5,000 sparse random linear constraints, d = 60.
* ``adult_logistic.json``: logistic regression on 6 numeric columns of UCI Adult (5,000
  rows) with a box and linear constraints on the coefficients.
* ``lattice_table.json``: a monotone calibrated lattice (sizes [3, 3, 2, 2]) read from a raw
  csv table of 4,000 rows by column name (docs/tables.md); ``listings.csv``: 1,000 new rows
  of the same kind, with their ``clicked`` labels, for ``lighttouch predict`` and ``report``.
* ``adult_fairness_table.json``: equal opportunity on UCI Adult from its raw csv rows (the
  first 6,000 of ``adult.data``, the columns used): a calibrated linear model and groups by
  column (``sex``, ``race``).
"""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from worker.datasets.adult import DATA, GROUPS, equal_opportunity_constraints
from worker.datasets.lattice import make_ranking_problem

HERE = Path(__file__).resolve().parent
ADULT = DATA / "adult.data"
ADULT_COLUMNS = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def data_uri(array) -> dict:
    """A data reference holding an .npz (dense array or scipy sparse matrix) inline."""
    buffer = io.BytesIO()
    if sp.issparse(array):
        sp.save_npz(buffer, sp.csr_matrix(array), compressed=True)
    else:
        np.savez_compressed(buffer, values=np.asarray(array))
    payload = base64.b64encode(buffer.getvalue()).decode("ascii")
    return {"uri": f"data:application/octet-stream;base64,{payload}", "format": "npz"}


def lattice_ranking() -> dict:
    dims = 6
    positive, negative, _ = make_ranking_problem(4000, dims, seed=1)
    return {
        "spec_version": 1, "name": "monotone lattice ranking (2^6 lattice, 4,000 pairs)",
        "bounds": {"lower": -10, "upper": 10},
        "objective": {"type": "empirical_risk", "loss": "pairwise_hinge",
                      "data": {"positive": data_uri(positive), "negative": data_uri(negative)}},
        "constraints": [{"type": "monotone_lattice", "shape": [2] * dims,
                         "increasing": list(range(dims))}],
        "solver": {"algorithm": "lighttouch", "iterations": 300_000, "seed": 0},
    }


def constrained_qp() -> dict:
    rng = np.random.default_rng(7)
    d, m = 60, 5000
    root = rng.normal(size=(d, d)) / np.sqrt(d)
    a = sp.random(m, d, density=4 / d, random_state=7, data_rvs=rng.standard_normal).tocsr()
    a = a[np.diff(a.indptr) > 0]
    inside = rng.uniform(-0.5, 0.5, size=d)
    norms = np.sqrt(np.asarray(a.multiply(a).sum(axis=1)).ravel())
    b = a @ inside + rng.uniform(0.05, 1.0, size=a.shape[0]) * norms
    return {
        "spec_version": 1, "name": "QP with ~5,000 sparse linear constraints",
        "bounds": {"lower": -2, "upper": 2},
        "objective": {"type": "quadratic", "Q": data_uri(root @ root.T + 0.1 * np.eye(d)),
                      "c": data_uri(rng.normal(size=d))},
        "constraints": [{"type": "linear", "A": data_uri(a), "b": data_uri(b)}],
        "solver": {"iterations": 200_000, "seed": 0},
    }


def adult_logistic(rows: int = 5000) -> dict:
    with ADULT.open(newline="") as handle:
        reader = csv.DictReader(handle, skipinitialspace=True)
        records = [row for _, row in zip(range(rows), reader, strict=False)]
    x = np.array([[float(r[c]) for c in ADULT_COLUMNS] for r in records])
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    features = np.column_stack([x, np.ones(len(records))])
    labels = np.array([1.0 if r["Y"].startswith(">50K") else -1.0 for r in records])
    return {
        "spec_version": 1, "name": "Adult logistic regression with coefficient constraints",
        "bounds": {"lower": -3, "upper": 3},
        "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 1e-3,
                      "data": {"features": data_uri(features), "labels": data_uri(labels)}},
        "constraints": [
            {"type": "ordering", "pairs": [[0, 1]]},
            {"type": "linear", "A": [[1, 1, 1, 1, 1, 0], [0, 0, -1, 1, 0, 0]],
             "b": [1.5, 0.0]},
        ],
        "solver": {"iterations": 200_000, "seed": 0},
    }


def csv_uri(header: list[str], rows: list[list]) -> dict:
    """A data reference holding a csv table inline."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    payload = base64.b64encode(buffer.getvalue().encode("utf-8")).decode("ascii")
    return {"uri": f"data:text/csv;base64,{payload}"}


#: The columns of the listings table.
LISTINGS = ["distance_km", "price", "rating", "reviews", "clicked"]


def listings(rows: int, seed: int) -> list[list]:
    """Clicks on listings whose chance rises with the rating and the reviews and falls with
    the distance and the price: the rows of a table with the :data:`LISTINGS` columns."""
    rng = np.random.default_rng(seed)
    distance, price = rng.exponential(5.0, rows), rng.lognormal(4.0, 0.5, rows)
    rating, reviews = rng.uniform(1, 5, rows), rng.poisson(30, rows)
    logit = 0.8 * (rating - 3) + 0.3 * np.log1p(reviews) - 0.15 * distance \
        - 0.01 * (price - 55) + 0.2 * (rating - 3) * (distance < 3)
    clicked = np.where(rng.random(rows) < 1 / (1 + np.exp(-logit)), 1, -1)
    return [[f"{d:.2f}", f"{p:.2f}", f"{r:.1f}", n, c]
            for d, p, r, n, c in zip(distance, price, rating, reviews, clicked, strict=True)]


def lattice_table(rows: int = 4000) -> dict:
    """A monotone lattice fitted to the raw listings table (training rows, seed 3)."""
    table_ref = csv_uri(LISTINGS, listings(rows, seed=3))
    return {
        "spec_version": 1, "name": "monotone calibrated lattice on a raw table",
        "bounds": {"lower": -5, "upper": 5},
        "model": {"type": "calibrated_lattice", "lattice": {"sizes": [3, 3, 2, 2]},
                  "features": [
                      {"column": "rating", "keypoints": 3, "monotonic": "increasing"},
                      {"column": "distance_km", "keypoints": [0, 2, 10],
                       "monotonic": "decreasing"},
                      {"column": "reviews", "keypoints": [0, 60], "monotonic": "increasing"},
                      {"column": "price", "keypoints": [20, 150], "monotonic": "decreasing"}]},
        "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 1e-3,
                      "data": {"table": table_ref, "label": "clicked"}},
        "solver": {"iterations": 200_000, "seed": 0},
    }


#: The Adult columns the fairness example reads.
ADULT_TABLE = ["age", "workclass", "education-num", "marital-status", "occupation",
               "relationship", "race", "sex", "capital-gain", "capital-loss",
               "hours-per-week", "Y"]


def adult_fairness_table(rows: int = 6000) -> dict:
    """TPR(G) >= 95% TPR(all) for female, male, black and white (Cotter et al. 2019, §6.2),
    groups named by column, on the raw rows of ``adult.data``."""
    with ADULT.open(newline="") as handle:
        reader = csv.DictReader(handle, skipinitialspace=True)
        records = [[row[c] for c in ADULT_TABLE]
                   for _, row in zip(range(rows), reader, strict=False)]
    numeric = {"age": [17, 25, 35, 45, 55, 65, 90], "education-num": 6,
               "hours-per-week": [1, 20, 35, 40, 50, 60, 99],
               "capital-gain": [0, 3000, 7000, 100000], "capital-loss": [0, 1500, 2500, 4500]}
    features = [{"column": name, "keypoints": keypoints} for name, keypoints in numeric.items()]
    features[1]["monotonic"] = "increasing"
    features += [{"column": name, "categories": "auto"}
                 for name in ("workclass", "marital-status", "occupation", "relationship",
                              "race", "sex")]
    groups = {name: {"column": column, "equals": value}
              for name, (column, value) in GROUPS.items()}
    return {
        "spec_version": 1, "name": "Adult equal opportunity from the raw table",
        "bounds": {"lower": -5, "upper": 5},
        "model": {"type": "calibrated_linear", "features": features},
        "objective": {"type": "empirical_risk", "loss": "hinge",
                      "data": {"table": csv_uri(ADULT_TABLE, records),
                               "label": {"column": "Y", "positive": [">50K"]},
                               "groups": groups}},
        "constraints": equal_opportunity_constraints(),
        "solver": {"algorithm": "proxy_lagrangian", "iterations": 20_000, "seed": 0},
        "output": {"mixture": True, "project": False},
    }


def main() -> None:
    for name, build in [("lattice_ranking", lattice_ranking), ("constrained_qp", constrained_qp),
                        ("adult_logistic", adult_logistic), ("lattice_table", lattice_table),
                        ("adult_fairness_table", adult_fairness_table)]:
        (HERE / f"{name}.json").write_text(json.dumps(build()) + "\n", encoding="utf-8")
        print(HERE / f"{name}.json")
    with (HERE / "listings.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(LISTINGS)
        writer.writerows(listings(1000, seed=4))
    print(HERE / "listings.csv")


if __name__ == "__main__":
    main()
