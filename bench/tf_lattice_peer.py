"""The TensorFlow Lattice side of :mod:`bench.tf_lattice_compare`, run in its own venv.

TensorFlow and TensorFlow Lattice do not live in the project's environment; this script
imports only them and numpy, and talks to the comparison through files in one directory:

``peer_input.npz``
    ``x_train`` (n, D), ``y_train`` (n,), ``x_test``, ``x_grid``: raw feature values.
``peer_config.json``
    ``{"runs": [...]}``; each run has a ``name``, ``calibration`` (``"fixed"`` or
    ``"learned"``), per-input ``keypoints`` and ``decreasing`` flags, lattice ``sizes``,
    Adam's ``learning_rate``, ``epochs``, ``batch_size`` and ``seed``.
``peer_output.npz`` / ``peer_output.json`` (written)
    each run's predictions on the three inputs (``<name>/train`` ...) and its fit seconds,
    per-epoch training MSE and the package versions.

The model is ``tfl.layers.PWLCalibration`` per input into ``tfl.layers.Lattice`` (simplex
interpolation, every input ``increasing``). A decreasing input is negated before its
calibrator (its keypoints negated and reversed), since the lattice layer takes only
increasing monotonicity. Fixed calibration: the calibrator's outputs are initialised to
equal heights from 0 to s - 1 and not trained, which is the fixed map the engine uses.

Run: ``.tfl-venv/bin/python bench/tf_lattice_peer.py DIRECTORY``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from importlib import metadata
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")   # TF Lattice needs Keras 2 (tf-keras)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_lattice as tfl  # noqa: E402
import tf_keras as keras  # noqa: E402


def oriented(x: np.ndarray, keypoints: list[list[float]],
             decreasing: list[bool]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Columns of ``x`` and their keypoints, a decreasing input negated (and its keypoints
    negated and reversed) so that every input is increasing."""
    columns, points = [], []
    for j, (knots, down) in enumerate(zip(keypoints, decreasing, strict=True)):
        sign = -1.0 if down else 1.0
        columns.append((sign * x[:, j])[:, None].astype(np.float32))
        points.append(np.sort(sign * np.asarray(knots, dtype=np.float64)))
    return columns, points


def build(run: dict) -> keras.Model:
    """Calibrators into a simplex lattice, compiled with Adam on the mean squared error."""
    _, points = oriented(np.zeros((1, len(run["sizes"]))), run["keypoints"],
                         run["decreasing"])
    inputs, calibrated = [], []
    for knots, size in zip(points, run["sizes"], strict=True):
        entry = keras.layers.Input(shape=(1,))
        layer = tfl.layers.PWLCalibration(
            input_keypoints=knots, output_min=0.0, output_max=float(size - 1),
            monotonicity="increasing", kernel_initializer="equal_heights",
            trainable=run["calibration"] == "learned")
        inputs.append(entry)
        calibrated.append(layer(entry))
    lattice = tfl.layers.Lattice(lattice_sizes=run["sizes"],
                                 monotonicities=["increasing"] * len(run["sizes"]),
                                 interpolation="simplex")
    model = keras.Model(inputs=inputs, outputs=lattice(keras.layers.concatenate(calibrated)))
    model.compile(loss="mse", optimizer=keras.optimizers.Adam(run["learning_rate"]))
    return model


def fit(run: dict, data: dict) -> tuple[dict, dict]:
    """Train one run; (its predictions, its figures)."""
    tf.keras.utils.set_random_seed(run["seed"])
    keras.utils.set_random_seed(run["seed"])
    model = build(run)

    def columns(x: np.ndarray) -> list[np.ndarray]:
        return oriented(x, run["keypoints"], run["decreasing"])[0]

    started = time.perf_counter()
    history = model.fit(columns(data["x_train"]), data["y_train"].astype(np.float32),
                        epochs=run["epochs"], batch_size=run["batch_size"], shuffle=True,
                        verbose=0)
    seconds = time.perf_counter() - started
    predictions = {part: model.predict(columns(data[f"x_{part}"]), batch_size=8192,
                                       verbose=0).ravel().astype(np.float64)
                   for part in ("train", "test", "grid")}
    figures = {"fit_s": seconds, "epochs": run["epochs"],
               "epoch_mse": [float(v) for v in history.history["loss"]]}
    return predictions, figures


def main(directory: Path) -> None:
    """Every configured run; predictions to npz, figures to json."""
    data = dict(np.load(directory / "peer_input.npz"))
    config = json.loads((directory / "peer_config.json").read_text())
    versions = {name: metadata.version(name)
                for name in ("tensorflow", "tf-keras", "tensorflow-lattice")}
    arrays, report = {}, {"versions": versions, "runs": {}}
    for run in config["runs"]:
        predictions, figures = fit(run, data)
        arrays.update({f"{run['name']}/{part}": values
                       for part, values in predictions.items()})
        report["runs"][run["name"]] = figures
        print(run["name"], f"{figures['fit_s']:.1f} s", flush=True)
    np.savez(directory / "peer_output.npz", **arrays)
    (directory / "peer_output.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
