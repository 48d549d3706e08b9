"""Our side of :mod:`bench.tf_lattice_compare`: the raw-table specs, the lowered problem and
its exact optimum, the monotonicity check on a grid, and the figure."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import cvxpy as cp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from worker.problem.compile import DataSource, compile_problem  # noqa: E402
from worker.problem.compiled import CompiledProblem  # noqa: E402
from worker.settings import data_settings  # noqa: E402
from worker.spec.models import parse_spec  # noqa: E402
from worker.tables.columns import Table  # noqa: E402
from worker.tables.lower import lower_tables  # noqa: E402

COLUMNS = ("spend", "distance", "rating")
DECREASING = (False, True, False)
#: The box on every parameter: wide enough never to bind on these targets (0 to about 6).
BOUND = 20.0
#: A drop smaller than this between grid neighbours is float32 rounding, not a violation.
DROP_TOLERANCE = 1e-6


def table_spec(model: dict, table: dict) -> dict:
    """The raw-table spec of one of our models (``model``: ``type``, per-input
    ``keypoints``, lattice ``sizes``); a squared loss and no ``solver`` block."""
    features = [{"column": column, "keypoints": knots,
                 "monotonic": "decreasing" if down else "increasing"}
                for column, knots, down in zip(COLUMNS, model["keypoints"], DECREASING,
                                               strict=True)]
    block = {"type": model["type"], "features": features}
    if model["type"] == "calibrated_lattice":
        block["lattice"] = {"sizes": list(model["sizes"])}
    return {"spec_version": 1, "name": f"tf lattice comparison, {model['type']}",
            "bounds": {"lower": -BOUND, "upper": BOUND}, "model": block,
            "objective": {"type": "empirical_risk", "loss": "squared", "l2": 0,
                          "data": {"table": table, "label": "y"}}}


def lowered_problem(spec: dict, directory: Path
                    ) -> tuple[CompiledProblem, Callable[[np.ndarray], sp.csr_matrix]]:
    """The compiled problem the engine solves for ``spec``, and the fitted model's feature
    rows of raw inputs (n, 3)."""
    lowered = lower_tables(parse_spec(spec), DataSource([directory], settings=data_settings()))
    problem = compile_problem(lowered.spec, lowered.source)

    def features(x: np.ndarray) -> sp.csr_matrix:
        table = Table.of(pa.table(dict(zip(COLUMNS, x.T, strict=True))), "rows")
        return lowered.model.features(table)

    return problem, features


def exact_mse(problem: CompiledProblem) -> tuple[float, float]:
    """(the minimum training MSE over the box and constraints, CVXPY + Clarabel's seconds)."""
    features, labels = problem.objective.features, problem.objective.labels
    w = cp.Variable(problem.d)
    constraints = [w >= problem.lower, w <= problem.upper]
    if problem.constraints.matrix.shape[0]:
        constraints.append(problem.constraints.matrix @ w <= problem.constraints.rhs)
    started = time.perf_counter()
    cp.Problem(cp.Minimize(cp.sum_squares(features @ w - labels) / labels.size),
               constraints).solve(solver=cp.CLARABEL)
    seconds = time.perf_counter() - started
    return float(np.mean((features @ w.value - labels) ** 2)), seconds


def monotonicity(values: np.ndarray, points: int, dims: int,
                 decreasing: tuple[bool, ...]) -> dict:
    """Violations of each input's monotonicity between grid neighbours: how many steps go
    the wrong way by more than DROP_TOLERANCE, and the largest wrong-way step."""
    cube = values.reshape((points,) * dims)
    count, worst = 0, 0.0
    for axis, down in enumerate(decreasing):
        steps = np.diff(cube, axis=axis) * (-1.0 if down else 1.0)
        count += int(np.sum(steps < -DROP_TOLERANCE))
        worst = max(worst, float(-steps.min()))
    return {"monotonicity_violations": count, "monotonicity_max_drop": worst,
            "grid_steps": dims * (points - 1) * points ** (dims - 1)}


def plot(report: dict, path: Path) -> None:
    """Left: TF Lattice's training MSE by epoch against the exact optimum of the fixed-
    calibration lattice. Right: training and held-out MSE of every model."""
    rows = report["rows"]
    figure, (curves, bars) = plt.subplots(1, 2, figsize=(13, 5))
    base = next(row for row in rows if row["model"] == "ours_lattice")
    for row in rows:
        if "epoch_mse" in row:
            curves.plot(np.arange(1, len(row["epoch_mse"]) + 1), row["epoch_mse"],
                        label=row["model"])
    curves.axhline(base["optimum_mse"], color="black", linestyle="--",
                   label="exact optimum, fixed calibration")
    curves.set(xscale="log", yscale="log", xlabel="epoch",
               ylabel="training MSE (Keras' running epoch mean)")
    curves.legend(fontsize=8)
    names = [row["model"] for row in rows]
    place = np.arange(len(rows))
    bars.barh(place - 0.2, [row["train_mse"] for row in rows], 0.4, label="training")
    bars.barh(place + 0.2, [row["test_mse"] for row in rows], 0.4, label="held-out")
    bars.set_yticks(place, names, fontsize=8)
    bars.invert_yaxis()
    bars.set_xlabel("mean squared error")
    bars.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
