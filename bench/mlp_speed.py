"""Speed of one network step: the product's compiled game step against the same step in numpy
and against scikit-learn's ``MLPClassifier``, in one run on one core.

The step: a minibatch of 100 digits (64 features), one hidden layer of ReLU units, 10 softmax
scores, the cross-entropy's gradient by backpropagation and a diagonal AdaGrad update of every
parameter. The product's figure is :func:`~worker.kernels.network_game.network_game_steps`
with one term and no constraints (sampling, forward, backward, AdaGrad, the multiplier step);
numpy's is the same arithmetic with numpy's BLAS-backed products; scikit-learn's is one epoch
of ``partial_fit`` (SGD, ``batch_size=100``, the same architecture) divided by its minibatches.
Each figure is the best of ``--repeats`` timings in thread CPU time, so other processes on the
machine do not count. BLAS is limited to one thread for all three.

Writes bench/results/mlp_speed.json and mlp_speed.png.
Run: ``OMP_NUM_THREADS=1 .venv/bin/python bench/mlp_speed.py``
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

from worker.algorithms.run.game_rounds import rate_arrays  # noqa: E402
from worker.algorithms.runners.network_games import network_terms, new_state  # noqa: E402
from worker.kernels.games import LAGRANGIAN, GameConfig  # noqa: E402
from worker.kernels.layout import STEP_SCHEDULE  # noqa: E402
from worker.kernels.network import SOFTMAX  # noqa: E402
from worker.kernels.network_game import NetworkConfig, network_game_steps  # noqa: E402
from worker.problem.network import Network, NetworkProblem, Term  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
BATCH = 100
ETA = 0.05


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=RESULTS / "mlp_speed.json")
    return parser.parse_args()


def steps_per_second(run, steps: int, repeats: int) -> float:
    """Steps per second of ``run(steps)`` (which returns the steps it took), by the least
    thread CPU time of ``repeats`` calls."""
    best = np.inf
    for _ in range(repeats):
        began = time.thread_time()
        done = run(steps)
        best = min(best, time.thread_time() - began)
    return done / best


def product_step(x: np.ndarray, labels: np.ndarray, hidden: int):
    """steps -> steps taken: that many of the product's compiled steps."""
    network = Network((x.shape[1], hidden, 10), bias=True)
    problem = NetworkProblem(network, [Term(sp.csr_matrix(x), labels.astype(float), SOFTMAX)],
                             False, np.full(network.parameters, -np.inf),
                             np.full(network.parameters, np.inf))
    state = new_state(network.initial(0), 0.0, 0, LAGRANGIAN, 1, 0)
    game = GameConfig(LAGRANGIAN, ETA, 0.1, np.inf, 0.0, BATCH, BATCH, 0, STEP_SCHEDULE)
    cfg = NetworkConfig(game, False, 0.0, 0.0)
    arrays, terms = network.arrays(), network_terms(problem)
    rates = rate_arrays(None, x.shape[1], relaxed=True)
    def run(steps: int) -> int:
        network_game_steps(arrays, terms, rates, problem.lower, problem.upper, cfg, state, steps)
        return steps

    return run


def numpy_step(x: np.ndarray, labels: np.ndarray, hidden: int):
    """steps -> steps taken: the same step written with numpy."""
    rng = np.random.default_rng(0)
    limit = np.sqrt(6 / x.shape[1])
    w1, b1 = rng.uniform(-limit, limit, (x.shape[1], hidden)), np.zeros(hidden)
    limit = np.sqrt(6 / (hidden + 10))
    w2, b2 = rng.uniform(-limit, limit, (hidden, 10)), np.zeros(10)
    params = [w1, b1, w2, b2]
    squares = [np.zeros_like(p) for p in params]

    def run(steps: int) -> int:
        for _ in range(steps):
            rows = rng.integers(0, x.shape[0], BATCH)
            xb, yb = x[rows], labels[rows]
            h = np.maximum(xb @ w1 + b1, 0.0)
            s = h @ w2 + b2
            p = np.exp(s - s.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(BATCH), yb] -= 1.0
            p /= BATCH
            dh = (p @ w2.T) * (h > 0)
            grads = [xb.T @ dh, dh.sum(axis=0), h.T @ p, p.sum(axis=0)]
            for param, grad, square in zip(params, grads, squares, strict=True):
                square += grad * grad
                param -= ETA * grad / np.sqrt(np.where(square > 0, square, 1.0))
        return steps

    return run


def sklearn_epoch(x: np.ndarray, labels: np.ndarray, hidden: int):
    """steps -> steps taken: partial_fit epochs of scikit-learn's MLP covering about ``steps``
    minibatches (whole epochs only)."""
    model = MLPClassifier(hidden_layer_sizes=(hidden,), solver="sgd", batch_size=BATCH,
                          learning_rate_init=ETA, random_state=0)
    classes = np.arange(10)
    per_epoch = int(np.ceil(x.shape[0] / BATCH))

    def run(steps: int) -> int:
        epochs = max(1, steps // per_epoch)
        for _ in range(epochs):
            model.partial_fit(x, labels, classes=classes)
        return epochs * per_epoch

    return run


def main() -> None:
    args = parse_args()
    x, labels = load_digits(return_X_y=True)
    x = x / 16.0
    rows = []
    for hidden in args.hidden:
        runs = {"product": product_step(x, labels, hidden),
                "numpy": numpy_step(x, labels, hidden), "sklearn": sklearn_epoch(x, labels, hidden)}
        for run in runs.values():
            run(1)  # compile and warm up
        figures = {name: steps_per_second(run, args.steps, args.repeats)
                   for name, run in runs.items()}
        row = {"hidden": hidden, "steps_per_s": {k: round(v, 1) for k, v in figures.items()},
               "product_vs_numpy": round(figures["product"] / figures["numpy"], 3),
               "product_vs_sklearn": round(figures["product"] / figures["sklearn"], 3)}
        rows.append(row)
        print(json.dumps(row))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"batch": BATCH, "rows": rows}, indent=2))
    figure, axis = plt.subplots(figsize=(6, 3.4))
    for k, name in enumerate(("product", "numpy", "sklearn")):
        axis.bar(np.arange(len(rows)) + 0.27 * k, [r["steps_per_s"][name] for r in rows], 0.27,
                 label=name)
    axis.set_xticks(np.arange(len(rows)) + 0.27, [str(r["hidden"]) for r in rows])
    axis.set_xlabel("hidden units")
    axis.set_ylabel("steps / s (one core)")
    axis.set_yscale("log")
    axis.legend()
    figure.tight_layout()
    figure.savefig(args.output.with_suffix(".png"), dpi=120)


if __name__ == "__main__":
    main()
