"""Raw tables for the tests of :mod:`worker.tables`: files in each format, and the plain
numpy features a user would compute by hand (the reference of the lowering)."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.feather as feather
import pyarrow.parquet as pq


def write_table(path: Path, columns: dict, fmt: str = "csv") -> dict:
    """Write the columns to ``path`` (its suffix set to the format); the data reference."""
    path = path.with_suffix(f".{fmt}")
    table = pa.table(columns)
    {"csv": pa_csv.write_csv, "parquet": pq.write_table,
     "feather": feather.write_feather}[fmt](table, str(path))
    return {"uri": path.resolve().as_uri()}


def hat_basis(values: np.ndarray, keypoints: np.ndarray) -> np.ndarray:
    """Piecewise-linear calibrator features (n, K): column k interpolates the k-th unit
    vector at the keypoints (constant beyond them)."""
    eye = np.eye(keypoints.size)
    return np.column_stack([np.interp(values, keypoints, eye[k]) for k in range(keypoints.size)])


def one_hot(values, categories) -> np.ndarray:
    """Indicator features (n, number of categories)."""
    values = np.asarray(values)
    return np.column_stack([values == category for category in categories]).astype(float)


def curvature_matrix(keypoints: np.ndarray, offset: int, d: int, sign: float) -> np.ndarray:
    """Rows ``sign * ((theta_k - theta_(k-1))/h_(k-1) - (theta_(k+1) - theta_k)/h_k) <= 0``."""
    h = np.diff(keypoints)
    rows = np.zeros((keypoints.size - 2, d))
    for k in range(1, keypoints.size - 1):
        rows[k - 1, offset + k - 1: offset + k + 2] = sign * np.array(
            [-1 / h[k - 1], 1 / h[k - 1] + 1 / h[k], -1 / h[k]])
    return rows


def inline_lattice_spec(with_category: bool = False) -> dict:
    """A small calibrated lattice whose table is inline csv; ``with_category`` adds a third,
    categorical input (``venue``: 3 categories, ordered)."""
    rng = np.random.default_rng(0)
    rows = ["rating,distance,venue,clicked"]
    for _ in range(300):
        rating, distance = rng.uniform(1, 5), rng.exponential(4)
        venue = rng.choice(["cafe", "bar", "diner"])
        clicked = 1 if rating - 0.3 * distance + rng.normal() > 2 else -1
        rows.append(f"{rating:.2f},{distance:.2f},{venue},{clicked}")
    payload = base64.b64encode("\n".join(rows).encode()).decode()
    features = [{"column": "rating", "keypoints": [1, 3, 5], "monotonic": "increasing"},
                {"column": "distance", "keypoints": [0, 10], "monotonic": "decreasing"}]
    if with_category:
        features.append({"column": "venue", "categories": "auto", "monotonic": "increasing",
                         "monotonic_order": ["diner", "cafe", "bar"]})
    return {"bounds": {"lower": -5, "upper": 5},
            "model": {"type": "calibrated_lattice",
                      "lattice": {"sizes": [3, 2, 3] if with_category else [3, 2]},
                      "features": features},
            "objective": {"type": "empirical_risk", "loss": "logistic", "data": {
                "table": {"uri": f"data:text/csv;base64,{payload}"}, "label": "clicked"}},
            "solver": {"iterations": 5000}}
