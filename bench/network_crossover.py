"""Where full-batch L-BFGS-B stops paying on networks: the seconds of ``lbfgsb`` and of the
network games (``lagrangian``) on one-hidden-layer MLPs as the data grow, for the size rule of
:func:`worker.algorithms.method_choice.choose_network`.

Two kinds of rows (``--data``), 64 features each: ``teacher``, Gaussian rows with labels of a
random one-hidden-layer teacher, 10% of them flipped (no network fits them: both methods run
to their stopping tests), and ``digits``, the 8 x 8 digits (>= 5 against < 5, pixels / 16)
repeated with Gaussian jitter of 0.02 per pixel (nearly separable, as the defaults matrix's
MLP row: the loss falls towards 0), the held-out rows from other images. A logistic
objective without penalties and an MLP of 32 ReLU units (P = 2,113 parameters); each n
solved whole (``solve``: compile, method, shrinking, summary) by both methods with the same
``init_seed``. For each: n, n P (the rule's
:func:`~worker.algorithms.method_choice.network_work`), seconds, the training objective,
the test error on 2,000 held-out rows and why it stopped.

Writes bench/results/network_crossover_DATA.json and a PNG of seconds against n P.

Run: ``PYTHONPATH=.:bench .venv/bin/python bench/network_crossover.py --data digits``
(some 10 minutes; ``--sizes`` to choose the n)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from defaults_special import ref  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from worker import solve  # noqa: E402
from worker.mixture import Mixture  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
FEATURES, HIDDEN, HELD = 64, 32, 2_000
PARAMETERS = FEATURES * HIDDEN + HIDDEN + HIDDEN + 1
METHODS = ("lbfgsb", "lagrangian")


def teacher_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n + HELD Gaussian rows (., FEATURES) and labels +-1 of a random ReLU teacher with 8
    hidden units, 10% of them flipped."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + HELD, FEATURES))
    hidden = np.maximum(x @ rng.normal(size=(FEATURES, 8)), 0.0)
    score = hidden @ rng.normal(size=8)
    y = np.where(score > np.median(score), 1.0, -1.0)
    y[rng.uniform(size=y.size) < 0.1] *= -1.0
    return x, y


def digits_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n + HELD rows (., FEATURES) of the digits repeated with jitter, and labels +-1: the
    n from 70% of the images, the HELD from the others."""
    digits = load_digits()
    rng = np.random.default_rng(seed)
    order = rng.permutation(digits.target.size)
    cut = int(0.7 * order.size)
    picked = np.concatenate([rng.choice(order[:cut], n), rng.choice(order[cut:], HELD)])
    x = digits.data[picked] / 16.0 + 0.02 * rng.normal(size=(n + HELD, FEATURES))
    return x, np.where(digits.target[picked] >= 5, 1.0, -1.0)


DATA = {"teacher": teacher_data, "digits": digits_data}


def run(n: int, method: str, data: str, directory: Path, time_limit: float) -> dict:
    """One solve of the MLP on n rows of ``data`` by ``method``: its row of the results."""
    x, y = DATA[data](n, 0)
    spec = {"spec_version": 1, "model": {"type": "mlp", "hidden": [HIDDEN]},
            "objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": ref(directory, f"x{data}{n}.npz",
                                                   sp.csr_matrix(x[:n])),
                                   "labels": ref(directory, f"y{data}{n}.npy", y[:n])}},
            "solver": {"algorithm": method, "time_limit_s": time_limit}}
    began = time.perf_counter()
    result = solve(spec, roots=[directory])
    seconds = time.perf_counter() - began
    return {"n": n, "work": n * PARAMETERS, "method": method, "seconds": seconds,
            "objective": result.mean.objective,
            "test_error": Mixture.from_result(result).error_rate(x[n:], y[n:]),
            "stopped_by": result.stats.get("stopped_by")}


def plot(rows: list[dict], path: Path) -> None:
    """Seconds against n P, one line per method."""
    figure, axis = plt.subplots(figsize=(6, 4))
    for method in METHODS:
        mine = [row for row in rows if row["method"] == method]
        axis.loglog([row["work"] for row in mine], [row["seconds"] for row in mine], "o-",
                    label=method)
    axis.set_xlabel("n P (examples x parameters)")
    axis.set_ylabel("seconds (whole solve)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*",
                        default=[1_000, 4_000, 16_000, 32_000, 64_000])
    parser.add_argument("--data", choices=sorted(DATA), default="teacher")
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        run(200, "lbfgsb", args.data, Path(directory), args.time_limit)  # load the kernels
        for n in args.sizes:
            for method in METHODS:
                rows.append(run(n, method, args.data, Path(directory), args.time_limit))
                print(json.dumps(rows[-1]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    name = f"network_crossover_{args.data}"
    (RESULTS / f"{name}.json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, RESULTS / f"{name}.png")


if __name__ == "__main__":
    main()
