"""Calibrated models against TensorFlow Lattice on the same data, in one run: training
objective against the exact optimum, held-out error, time and monotonicity.

The data are a synthetic regression with known monotone structure (three numeric inputs on
different scales, each entering through a nonlinear monotone shape, one of them decreasing,
with an interaction), written as CSV tables. On them:

* ours: ``calibrated_lattice`` (sizes [3, 2, 3], keypoints the s_j training quantiles of
  each input, a squared loss, no ``solver`` block) and ``calibrated_linear`` (10 keypoints),
  solved in this process by :func:`worker.solve` from the raw-table spec;
* the exact optimum of each of our problems: CVXPY + Clarabel on the lowered problem (the
  feature rows and constraint blocks :func:`worker.tables.lower.lower_tables` builds);
* TensorFlow Lattice (:mod:`bench.tf_lattice_peer`, in its own venv): the same lattice with
  the same fixed calibration, trained by Adam at three learning rates, and with learned
  calibrators (the same keypoints, and 10 keypoints per input);
* the convex remedies: our lattice with more keypoints and larger sizes (the largest,
  12 x 6 x 12, with ``solver.time_limit_s`` 60 as a bound: its program, 751,104 nonzeros,
  is within the exact methods' limit).

Every model is scored here, from its predictions, on the same three sets: the training
rows (mean squared error: the training objective, ours being half of it), the held-out rows,
and a grid over the inputs' 1-99% ranges where monotonicity is checked along each input.

Usage::

    python -m bench.tf_lattice_compare            # about 7 minutes
    python -m bench.tf_lattice_compare --quick    # fewer epochs

Writes ``bench/results/tf_lattice_compare.json`` and ``.png``. Without the TensorFlow venv
the JSON says so and names the command that creates it (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from bench.tf_lattice_models import (
    COLUMNS,
    DECREASING,
    exact_mse,
    lowered_problem,
    monotonicity,
    plot,
    table_spec,
)
from worker import solve

RESULTS = Path(__file__).resolve().parent / "results"
#: TensorFlow's own environment, beside the project's (``.tfl-venv`` at the repository's top,
#: ignored by git), or the python that ``TF_LATTICE_PYTHON`` names.
TF_PYTHON = Path(os.environ.get("TF_LATTICE_PYTHON",
                                Path(__file__).resolve().parents[1] / ".tfl-venv/bin/python"))
TF_VENV_COMMAND = ("python3 -m venv .tfl-venv && .tfl-venv/bin/pip install "
                   "'tensorflow==2.20.*' 'tf-keras==2.20.*' 'tensorflow-lattice==2.1.1'")
BASE_SIZES = (3, 2, 3)
GRID_POINTS = 25
LARGE_TIME_LIMIT_S = 60.0


def make_data(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs (rows, 3) and targets: y = 1.5 a + b + 2 c + a c + noise (sd 0.1), with
    a = log(1 + spend) / log 51 (spend exponential, mean 10), b = 1 - distance^3 (distance
    uniform on [0, 1]: decreasing) and c = sigmoid(3 rating) (rating standard normal)."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.exponential(10.0, rows), rng.uniform(0.0, 1.0, rows),
                         rng.normal(0.0, 1.0, rows)])
    a, b = np.log1p(x[:, 0]) / np.log(51.0), 1.0 - x[:, 1] ** 3
    c = 1.0 / (1.0 + np.exp(-3.0 * x[:, 2]))
    return x, 1.5 * a + b + 2.0 * c + a * c + 0.1 * rng.normal(size=rows)


def quantile_keypoints(x: np.ndarray, counts: tuple[int, ...]) -> list[list[float]]:
    """``counts[j]`` quantiles of column j, minimum and maximum included."""
    return [np.quantile(x[:, j], np.linspace(0.0, 1.0, k)).tolist()
            for j, k in enumerate(counts)]


def grid(x: np.ndarray) -> np.ndarray:
    """GRID_POINTS values per input over its 1-99% range, every combination, C order."""
    axes = [np.linspace(*np.quantile(x[:, j], [0.01, 0.99]), GRID_POINTS)
            for j in range(x.shape[1])]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, x.shape[1])


def write_table(path: Path, x: np.ndarray, y: np.ndarray | None = None) -> dict:
    """A CSV table of the inputs (and the target ``y``); its data reference."""
    columns = dict(zip(COLUMNS, x.T, strict=True))
    if y is not None:
        columns["y"] = y
    pacsv.write_csv(pa.table(columns), path)
    return {"uri": path.resolve().as_uri(), "format": "csv"}


def scored(name: str, predictions: dict, data: dict, optimum: float | None,
           seconds: float) -> dict:
    """One model's row: training MSE (and excess over ``optimum``), held-out MSE, seconds,
    monotonicity on the grid."""
    train = float(np.mean((predictions["train"] - data["y_train"]) ** 2))
    row = {"model": name, "train_mse": train,
           "test_mse": float(np.mean((predictions["test"] - data["y_test"]) ** 2)),
           "seconds": seconds,
           **monotonicity(predictions["grid"], GRID_POINTS, len(COLUMNS), DECREASING)}
    if optimum is not None:
        row["excess_over_optimum"] = (train - optimum) / optimum
    return row


def ours(name: str, model: dict, data: dict, directory: Path) -> tuple[dict, float]:
    """Solve our model from the raw-table spec with defaults; (its row, the exact optimum
    of the same problem)."""
    spec = table_spec(model, data["train_ref"])
    if "time_limit_s" in model:
        spec["solver"] = {"time_limit_s": model["time_limit_s"]}
    started = time.perf_counter()
    result = solve(spec, roots=[directory])
    seconds = time.perf_counter() - started
    point = result.projected if result.projected is not None else result.mean
    problem, fitted = lowered_problem(spec, directory)
    optimum, optimum_s = exact_mse(problem)
    predictions = {part: fitted(data[f"x_{part}"]) @ np.asarray(point.solution)
                   for part in ("train", "test", "grid")}
    row = scored(name, predictions, data, optimum, seconds)
    row.update(optimum_mse=optimum, optimum_s=optimum_s, method=result.algorithm,
               parameters=problem.d, max_violation=point.max_violation,
               stopped_by=result.stats.get("stopped_by"),
               method_reason=result.stats.get("method_reason"),
               time_limit_s=model.get("time_limit_s"))
    return row, optimum


def peer_runs(data: dict, quick: bool) -> list[dict]:
    """TF Lattice's runs: fixed calibration at three learning rates, learned calibration."""
    epochs = 60 if quick else 1000
    base = {"sizes": list(BASE_SIZES), "decreasing": list(DECREASING), "batch_size": 256,
            "seed": 0, "keypoints": data["base_keypoints"], "epochs": epochs}
    runs = [{**base, "name": f"tfl_fixed_lr{rate:g}", "calibration": "fixed",
             "learning_rate": rate} for rate in (0.1, 0.01)]
    runs.append({**base, "name": "tfl_fixed_lr0.001", "calibration": "fixed",
                 "learning_rate": 0.001, "epochs": 3 * epochs})
    runs.append({**base, "name": "tfl_learned", "calibration": "learned",
                 "learning_rate": 0.01})
    runs.append({**base, "name": "tfl_learned_10kp", "calibration": "learned",
                 "learning_rate": 0.01, "keypoints": data["keypoints_10"]})
    return runs


def run_peer(directory: Path, data: dict, runs: list[dict]) -> dict:
    """TF Lattice's predictions and figures, or why there are none."""
    if not TF_PYTHON.exists():
        return {"missing": f"no TensorFlow venv at {TF_PYTHON}", "create_with": TF_VENV_COMMAND}
    np.savez(directory / "peer_input.npz", x_train=data["x_train"], y_train=data["y_train"],
             x_test=data["x_test"], x_grid=data["x_grid"])
    (directory / "peer_config.json").write_text(json.dumps({"runs": runs}))
    done = subprocess.run([str(TF_PYTHON), str(Path(__file__).with_name("tf_lattice_peer.py")),
                           str(directory)], capture_output=True, text=True)
    if done.returncode != 0:
        return {"failed": done.returncode, "stderr": done.stderr[-3000:]}
    report = json.loads((directory / "peer_output.json").read_text())
    arrays = np.load(directory / "peer_output.npz")
    report["predictions"] = {run["name"]: {part: arrays[f"{run['name']}/{part}"]
                                           for part in ("train", "test", "grid")}
                             for run in runs}
    return report


def models(data: dict) -> dict[str, dict]:
    """Our models: the base lattice, the linear model, and the convex remedies."""
    x = data["x_train"]
    found = {"ours_lattice": {"type": "calibrated_lattice", "sizes": BASE_SIZES,
                              "keypoints": data["base_keypoints"]},
             "ours_linear_10kp": {"type": "calibrated_linear",
                                  "keypoints": data["keypoints_10"]},
             "ours_lattice_10kp": {"type": "calibrated_lattice", "sizes": BASE_SIZES,
                                   "keypoints": data["keypoints_10"]}}
    for sizes in ((5, 3, 5), (8, 4, 8), (12, 6, 12)):
        found["ours_lattice_" + "x".join(map(str, sizes))] = {
            "type": "calibrated_lattice", "sizes": sizes,
            "keypoints": quantile_keypoints(x, sizes)}
    # 864 vertices: over the exact methods' limit, the iterative default would run to the
    # default 600 s time limit; this one row says where it is after LARGE_TIME_LIMIT_S.
    found["ours_lattice_12x6x12"]["time_limit_s"] = LARGE_TIME_LIMIT_S
    return found


def dataset(directory: Path, train_rows: int, test_rows: int) -> dict:
    """The training and held-out rows, their tables, the grid and the keypoint sets."""
    x_train, y_train = make_data(train_rows, 0)
    x_test, y_test = make_data(test_rows, 1)
    return {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test,
            "x_grid": grid(x_train), "columns": COLUMNS, "decreasing": DECREASING,
            "train_ref": write_table(directory / "train.csv", x_train, y_train),
            "base_keypoints": quantile_keypoints(x_train, BASE_SIZES),
            "keypoints_10": quantile_keypoints(x_train, (10,) * len(COLUMNS))}


def run(train_rows: int, test_rows: int, quick: bool) -> dict:
    """Every model of the comparison, scored the same way."""
    report: dict = {"train_rows": train_rows, "test_rows": test_rows,
                    "load_average_1min_start": os.getloadavg()[0], "rows": []}
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        data = dataset(directory, train_rows, test_rows)
        optimum = None
        for label, model in models(data).items():
            row, exact = ours(label, model, data, directory)
            optimum = exact if label == "ours_lattice" else optimum
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
        runs = peer_runs(data, quick)
        peer = run_peer(directory, data, runs)
    if "predictions" not in peer:
        report["tf_lattice"] = peer
        print(f"TF Lattice NOT RUN: {json.dumps(peer)}", flush=True)
        return report
    report["tf_lattice"] = {"versions": peer["versions"], "runs": runs}
    for spec in runs:
        figures = peer["runs"][spec["name"]]
        row = scored(spec["name"], peer["predictions"][spec["name"]], data, optimum,
                     figures["fit_s"])
        row.update(epochs=figures["epochs"], epoch_mse=figures["epoch_mse"])
        report["rows"].append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "epoch_mse"}), flush=True)
    report["load_average_1min_end"] = os.getloadavg()[0]
    return report


def main(argv: list[str] | None = None) -> None:
    """Command line: run, write the JSON and the figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-rows", type=int, default=4000)
    parser.add_argument("--test-rows", type=int, default=4000)
    parser.add_argument("--quick", action="store_true", help="fewer TF epochs")
    parser.add_argument("--output", type=Path, default=RESULTS / "tf_lattice_compare.json")
    args = parser.parse_args(argv)
    report = run(args.train_rows, args.test_rows, args.quick)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    plot(report, args.output.with_suffix(".png"))


if __name__ == "__main__":
    main()
