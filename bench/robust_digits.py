"""Cotter, Jiang, Sridharan (2019) §6.1 / Table 1 on the corrupted digits
(:mod:`worker.datasets.digits`): minimize the largest of the four sets' cross-entropies with
a one-hidden-layer ReLU network, against training the same network on the union of the sets.

Rows, as Table 1 (plus the proxy-Lagrangian): the union baseline as the uniform mixture of its
candidates (Chen et al.'s "uniform distribution baseline", theta-bar) and as its last iterate
theta(T); the Lagrangian game on the slack form (theta-bar: uniform over its candidates; LP:
the shrunk mixture, at most m+1 = 5 members) and the proxy-Lagrangian game (theta-bar weighted
by lambda_1; LP). Columns: test and training error on each corrupted set, for the stochastic
classifier (expected over the mixture), and the support. Minibatches of 100 per term and
1,000 iterations: the paper's 50,000 steps of 100 over four MNIST training sets of 60,000
are 21 passes over their union; 1,000 steps of 100 over the digits' union of 4 x 1,257
images are 20.

Two protocols:

* default: every run at the product's automatic steps, trained on the training splits;
* ``--tune``, as §6 did: each row's steps are chosen on a validation split (a stratified
  fifth of each training set held out, :func:`worker.datasets.digits.validation_split`):
  every grid point trains on the remaining four fifths, and the row keeps the grid point
  whose classifier has the lowest worst-set validation error. Grids: AdaGrad's eta_w 0.0125
  .. 0.2 (powers of two around the automatic 0.05) for every method, and the multipliers'
  eta_lambda 0.1 x 4^k, k = -3..1, for the Lagrangian and 4^k, k = -1..1, for the
  proxy-Lagrangian (around their 0.1 and 1.0; a first grid of 0.025 .. 0.4 for the
  Lagrangian chose its lower end on every seed, so it was widened); ``on_grid_edge`` flags a
  choice at an end of a grid.

Each seed draws its own corruptions, initial weights and minibatches; the table is the mean
over seeds (each seed's rows, with the steps chosen, are in the JSON). Writes
bench/results/robust_digits.json (``--tune``: robust_digits_tuned.json) and the PNG beside
it, prints the table.

Run: ``.venv/bin/python bench/robust_digits.py [--tune]`` (1,024 hidden units, seeds 0-2:
some 10 minutes on one core, 45 with ``--tune``), or ``--hidden 64 --seeds 0`` for a quick
look.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import matplotlib
import numpy as np
import scipy.sparse as sp

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from worker.algorithms.runners.network_games import run_network_game  # noqa: E402
from worker.datasets.digits import (  # noqa: E402
    SETS,
    Split,
    corrupted_digits,
    robust_spec,
    union_spec,
    validation_split,
    write_digits,
)
from worker.model_types import MODEL_TYPES  # noqa: E402
from worker.pipeline.network import summarize_network  # noqa: E402
from worker.pipeline.options import solver_options  # noqa: E402
from worker.problem.compile import DataSource  # noqa: E402
from worker.problem.compile_network import compile_network_problem  # noqa: E402
from worker.settings import DaskSettings, data_settings, read_settings  # noqa: E402
from worker.spec.models import parse_spec  # noqa: E402
from worker.stats import merged  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
#: Table 1 of the paper (test then training error, %, sets 1-4 of Chen et al.'s MNIST).
PAPER = {"Baseline (theta-bar)": ((2.58, 2.66, 2.01, 2.52), (1.06, 1.45, 0.43, 1.10)),
         "Baseline (theta(T))": ((1.77, 1.92, 1.77, 1.75), (0.04, 0.40, 0.01, 0.08)),
         "Lagrangian (theta-bar)": ((2.04, 2.15, 1.96, 2.04), (0.42, 0.70, 0.30, 0.49)),
         "Lagrangian (LP)": ((1.66, 1.67, 1.63, 1.62), (0.00, 0.01, 0.00, 0.00))}


#: ``--tune``'s grids, powers of two around the defaults (AUTO_ETA 0.05 for the AdaGrad step;
#: the multipliers' 0.1 for the Lagrangian, 1.0 for the proxy-Lagrangian).
ETA_W_GRID = tuple(0.05 * 2.0 ** k for k in range(-2, 3))
ETA_LAMBDA_GRID = {"lagrangian": tuple(0.1 * 4.0 ** k for k in range(-3, 2)),
                   "proxy_lagrangian": tuple(4.0 ** k for k in range(-1, 2))}
#: Row family, algorithm, spec builder, and whether the multipliers' step is tuned.
METHODS = (("Baseline", "lagrangian", union_spec, False),
           ("Lagrangian", "lagrangian", robust_spec, True),
           ("Proxy", "proxy_lagrangian", robust_spec, True))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--eta-w", type=float, default=None,
                        help="AdaGrad's step for every run (default: the product's auto)")
    parser.add_argument("--eta-lambda", type=float, default=None,
                        help="the multipliers' step of every game (default: auto)")
    parser.add_argument("--tune", action="store_true",
                        help="choose each row's steps on a validation split (the grids above)")
    parser.add_argument("--output", type=Path, default=None,
                        help="default bench/results/robust_digits[_tuned].json")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = RESULTS / ("robust_digits_tuned.json" if args.tune
                                 else "robust_digits.json")
    return args


def train(spec: dict, algorithm: str, directory: Path, eta_w: float | None,
          eta_lambda: float | None):
    """(candidates (T, P), theta-bar's weights (T,), the shrunk weights (T,), network,
    seconds, stats) of one game on ``spec`` (steps None: the product's automatic ones)."""
    solver = dict(spec["solver"], algorithm=algorithm)
    if eta_w is not None:
        solver["eta_w"] = eta_w
    if eta_lambda is not None:
        solver["game"] = {"eta_lambda": eta_lambda}
    model = parse_spec(dict(spec, solver=solver))
    problem = compile_network_problem(model, DataSource([directory], data_settings()),
                                      MODEL_TYPES[model.model.type])
    options = solver_options(model.solver, read_settings(DaskSettings))
    began = time.perf_counter()
    trajectory = run_network_game(problem, options, algorithm, None, began + 3600.0)
    seconds = time.perf_counter() - began
    thetas = np.array(trajectory.candidates.solutions)
    result, summary = summarize_network(model, problem, trajectory)
    chosen = {m.iteration: m.weight for m in result.mixture}
    shrunk = np.array([chosen.get(i, 0.0) for i in trajectory.candidates.iterations])
    return (thetas, trajectory.baseline, shrunk, problem.network, seconds,
            merged(trajectory.stats, summary))


def errors(network, thetas: np.ndarray, split: Split) -> np.ndarray:
    """Each candidate's error rate on one split: shape (T,)."""
    csr = sp.csr_matrix(split.features)
    return np.array([float(np.mean(network.scores(theta, csr).argmax(axis=1) != split.labels))
                     for theta in thetas])


def table_rows(name: str, run, splits: dict[str, list[Split]]) -> list[dict]:
    """The theta-bar and LP rows (or theta(T) for the baseline) of one run, with their error
    in % on each set of every split (``splits``: split name -> the four sets' splits)."""
    thetas, baseline, shrunk, network, seconds, stats = run
    per_set = {key: np.stack([errors(network, thetas, split) for split in sets], axis=1)
               for key, sets in splits.items()}  # (T, 4) each
    last = np.zeros(len(thetas))
    last[-1] = 1.0
    mixtures = [("theta-bar", baseline),
                ("theta(T)" if name == "Baseline" else "LP", last if name == "Baseline"
                 else shrunk)]
    return [{"row": f"{name} ({label})", "support": int(np.count_nonzero(weights)),
             **{key: (100 * weights @ errors_).round(2).tolist()
                for key, errors_ in per_set.items()},
             "train_seconds": round(seconds, 1), "iterations": stats["iterations"],
             "eta_w": stats["eta_w"]}
            for label, weights in mixtures]


def plot(rows: list[dict], path: Path) -> None:
    figure, axis = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(rows)
    for k, row in enumerate(rows):
        axis.bar(np.arange(4) + k * width, row["test"], width, label=row["row"])
    axis.set_xticks(np.arange(4) + 0.4 - width / 2, SETS)
    axis.set_ylabel("test error (%)")
    axis.set_title("Corrupted digits: test error per set (lower is better)")
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def on_edge(row: dict, algorithm: str, tunes_lambda: bool) -> bool:
    """Whether a tuned row's steps lie on an end of their grid (the grid may be too narrow)."""
    ends = {ETA_W_GRID[0], ETA_W_GRID[-1]}
    lambdas = ETA_LAMBDA_GRID[algorithm]
    return row["eta_w"] in ends or (tunes_lambda and row["eta_lambda"] in
                                    {lambdas[0], lambdas[-1]})


def seed_rows(args: argparse.Namespace, seed: int) -> list[dict]:
    """Every row of the table for one seed (data corruption, initial weights, sampling):
    trained on the training splits at the given steps, or (``--tune``) each row at the grid
    point whose classifier has the lowest worst-set error on a validation split held out of
    the training images (ties: the first grid point), as §6 chose its AdaGrad steps."""
    data = corrupted_digits(seed)
    fit = validation_split(data) if args.tune else data
    splits = {"test": [data.sets[s].test for s in SETS],
              "train": [fit.sets[s].train for s in SETS]}
    if args.tune:
        splits["validation"] = [fit.sets[s].test for s in SETS]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        paths = write_digits(directory, fit)
        for name, algorithm, build, tunes_lambda in METHODS:
            spec = build(paths, hidden=[args.hidden], iterations=args.iterations, seed=seed)
            grid = [(args.eta_w, args.eta_lambda)]
            if args.tune:
                grid = [(eta_w, eta_lambda) for eta_w in ETA_W_GRID
                        for eta_lambda in (ETA_LAMBDA_GRID[algorithm] if tunes_lambda
                                           else (None,))]
            tried = [table_rows(name, train(spec, algorithm, directory, *steps), splits)
                     for steps in grid]
            for k in range(len(tried[0])):
                runs = [run[k] | {"eta_lambda": steps[1]}
                        for run, steps in zip(tried, grid, strict=True)]
                best = min(runs, key=lambda r: max(r.get("validation", [0.0])))
                if args.tune:
                    best["on_grid_edge"] = on_edge(best, algorithm, tunes_lambda)
                rows.append(best)
    for row in rows:
        row["worst_test"] = max(row["test"])
    return rows


def mean_rows(runs: list[list[dict]]) -> list[dict]:
    """Each row's errors and support averaged over the seeds' runs."""
    keys = [key for key in ("support", "test", "train", "validation", "worst_test")
            if key in runs[0][0]]
    return [{"row": rows[0]["row"],
             **{key: np.mean([r[key] for r in rows], axis=0).round(2).tolist()
                for key in keys}}
            for rows in zip(*runs, strict=True)]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    runs = [seed_rows(args, seed) for seed in args.seeds]
    rows = mean_rows(runs)
    print(f"{'row (mean over seeds)':26s} {'support':>7s}  test error (%) per set      "
          "training error (%)   worst test")
    for row in rows:
        worst_validation = f"   (validation {max(row['validation']):5.2f})" \
            if "validation" in row else ""
        print(f"{row['row']:26s} {row['support']:7.1f}  "
              + " ".join(f"{v:5.2f}" for v in row["test"]) + "   "
              + " ".join(f"{v:5.2f}" for v in row["train"]) + f"   {row['worst_test']:5.2f}"
              + worst_validation)
    settings = vars(args) | {"output": str(args.output)}
    if args.tune:
        settings |= {"eta_w_grid": ETA_W_GRID, "eta_lambda_grid": ETA_LAMBDA_GRID}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"settings": settings,
                                       "sets": list(SETS), "rows": rows,
                                       "seeds": dict(zip(map(str, args.seeds), runs,
                                                         strict=True)),
                                       "paper": PAPER}, indent=2))
    plot(rows, args.output.with_suffix(".png"))


if __name__ == "__main__":
    main()
