"""Defaults against the method a user would pick instead, on the same data in the same run.

Every row is solved with LightTouch's defaults (no ``solver`` block: ``auto`` picks the
method, ``iterations: "auto"`` the stopping point) and by its peer: scikit-learn's
LogisticRegression for unconstrained logistic regression, CVXPY with HiGHS (LPs) or Clarabel
(QPs, exponential cones) for constrained convex problems, fairlearn's ExponentiatedGradient
for rate constraints, scikit-learn's MLPClassifier for the MLP. Columns: the method ``auto``
ran and why it stopped, the seconds of each (LightTouch: the whole ``solve``, data loading
included; the peer: building and solving its model), their ratio, and the quality (the
objective's excess over the exact optimum, or for rates and the MLP the test errors and the
constraint on training data). Targets (docs/method-choice.md): within 1% of the optimum,
``stopped_by`` never ``time_limit``, and at most 1.5x the peer's time (2x against
scikit-learn on unconstrained logistic regression, 1x against fairlearn). Convex rows under
a second are timed as medians of five runs of each side (:data:`REPEAT_BELOW_S`).

Both sides are warm, as a queue worker is when it takes a job: the run first loads every
numba kernel (:func:`worker.queue.warm_up.warm_up`, which the worker runs at start and the
image's build runs to fill numba's cache) and solves a tiny problem with each peer.

Writes bench/results/defaults_matrix.json (``--quick``: defaults_matrix_quick.json, smaller
sizes) and a PNG of the time ratios; prints the table.

Run: ``PYTHONPATH=. .venv/bin/python bench/defaults_matrix.py [--quick] [--only NAME ...]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import cvxpy as cp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from defaults_rows import (  # noqa: E402
    Row,
    classification,
    cvxpy_alternative,
    feasible_rows,
    ref,
    risk_spec,
    sklearn_logistic,
    tight_logistic_optimum,
    warm_peers,
)
from defaults_special import (  # noqa: E402
    TIME_LIMIT,
    run_adult_rates,
    run_file,
    run_max_of,
    run_mlp,
)

from worker import solve  # noqa: E402
from worker.datasets.adult import load_adult  # noqa: E402
from worker.queue.warm_up import warm_up  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CLARABEL, HIGHS = cvxpy_alternative(cp.CLARABEL), cvxpy_alternative(cp.HIGHS)


def _risk(n: int, d: int, loss: str, m: int, **weights) -> Callable[[Path], dict]:
    """A row's builder: ``loss`` over n random examples of d features with m feasible linear
    rows (none when m is 0)."""
    def build(directory: Path) -> dict:
        x, y = classification(n, d, seed=m + len(loss))
        a, b = feasible_rows(m, d, seed=m)
        blocks = [{"type": "linear", "A": ref(directory, "a.npy", a),
                   "b": ref(directory, "b.npy", b)}] if m else []
        return risk_spec(directory, loss, x, y, constraints=blocks, **weights)
    return build


def _adult(directory: Path) -> dict:
    """Adult's training split, logistic with l2 = 1/n."""
    train, _ = load_adult()
    return risk_spec(directory, "logistic", train.features, train.labels,
                     l2=1.0 / train.labels.size)


def _quadratic(size: int, m: int, l1: float = 0.0,
               ordering: bool = False) -> Callable[[Path], dict]:
    """A row's builder: (1/2)w'Qw + c'w (+ l1 |w|_1) in the box [-1, 1]^size, under m feasible
    linear rows or (``ordering``) a chain over every coordinate."""
    def build(directory: Path) -> dict:
        rng = np.random.default_rng(size)
        root = rng.normal(size=(size, size)) / np.sqrt(size)
        a, b = feasible_rows(m, size, seed=size)
        blocks = [{"type": "ordering", "chain": rng.permutation(size).tolist()}] \
            if ordering else [{"type": "linear", "A": ref(directory, "a.npy", a),
                               "b": ref(directory, "b.npy", b)}]
        return {"spec_version": 1, "dimension": size,
                "bounds": {"lower": -1.0, "upper": 1.0},
                "objective": {"type": "quadratic", "Q": ref(directory, "q.npy",
                                                            root @ root.T),
                              "c": ref(directory, "c.npy", rng.normal(size=size)),
                              "l1": l1},
                "constraints": blocks}
    return build


def _chain(n: int, size: int) -> Callable[[Path], dict]:
    """A row's builder: hinge over n examples of ``size`` features, an ordering chain over
    every coordinate."""
    def build(directory: Path) -> dict:
        x, y = classification(n, size, seed=3)
        order = np.random.default_rng(4).permutation(size).tolist()
        return risk_spec(directory, "hinge", x, y,
                         constraints=[{"type": "ordering", "chain": order}])
    return build


def convex_rows(quick: bool) -> list[Row]:
    """The rows with one convex objective over arrays (module docstring)."""
    n, d, many = (2_000, 20, 1_000) if quick else (20_000, 50, 10_000)
    risk, adult, quadratic = partial(_risk, n, d), _adult, _quadratic
    chain = _chain(n, 100 if quick else 500)

    return [
        Row("adult-logistic", "Adult 32,561 x 125, logistic, l2 = 1/n, no constraints", adult,
            sklearn_logistic, "scikit-learn"),
        Row("quadratic-m600", "(1/2)w'Qw + c'w, d = 30, 600 linear rows, box", quadratic(30, 600),
            CLARABEL, "CVXPY+Clarabel"),
        Row("hinge-m0", f"hinge, n = {n:,}, d = {d}, no constraints", risk("hinge", 0),
            HIGHS, "CVXPY+HiGHS"),
        Row("hinge-m10", f"hinge, n = {n:,}, d = {d}, 10 linear rows", risk("hinge", 10),
            HIGHS, "CVXPY+HiGHS"),
        Row(f"hinge-m{many}", f"hinge, n = {n:,}, d = {d}, {many:,} linear rows",
            risk("hinge", many), HIGHS, "CVXPY+HiGHS"),
        Row("logistic-m0", f"logistic, l2 = 1e-3, n = {n:,}, d = {d}, no constraints",
            risk("logistic", 0, l2=1e-3), sklearn_logistic, "scikit-learn"),
        Row("logistic-m10", f"logistic, l2 = 1e-3, n = {n:,}, d = {d}, 10 linear rows",
            risk("logistic", 10, l2=1e-3), CLARABEL, "CVXPY+Clarabel"),
        Row(f"logistic-m{many}", f"logistic, l2 = 1e-3, n = {n:,}, d = {d}, {many:,} rows",
            risk("logistic", many, l2=1e-3), CLARABEL, "CVXPY+Clarabel"),
        Row("hinge-chain", f"hinge, n = {n:,}, an ordering chain over every coordinate",
            chain, HIGHS, "CVXPY+HiGHS"),
        Row("quadratic-l1-chain", "quadratic + 0.05 |w|_1, d = 200, ordering chain, box",
            quadratic(200, 0, l1=0.05, ordering=True), CLARABEL, "CVXPY+Clarabel"),
        Row("squared-l2-m10", f"squared, l2 = 0.1, n = {n:,}, d = {d}, 10 linear rows",
            risk("squared", 10, l2=0.1), CLARABEL, "CVXPY+Clarabel"),
    ]


#: Rows whose both sides take less than this are timed as the median of REPEATS runs of
#: each, alternating (at 10 ms a single run swings 2-3x with the machine's load); the
#: later solves read the parsed files from the data cache, as a worker's later jobs on the
#: same files do (the peers are handed arrays in memory).
REPEAT_BELOW_S, REPEATS = 1.0, 5


def run_convex(row: Row, directory: Path, time_limit: float | None) -> dict:
    """Solve one convex row both ways."""
    spec = row.build(directory)
    if time_limit is not None:
        spec["solver"] = {"time_limit_s": time_limit}
    began = time.perf_counter()
    result = solve(spec, roots=[directory])
    seconds = time.perf_counter() - began
    peer_seconds, peer_objective = row.alternative(spec, directory)
    if max(seconds, peer_seconds) < REPEAT_BELOW_S:   # medians of REPEATS runs each
        ours, theirs = [seconds], [peer_seconds]
        for _ in range(REPEATS - 1):
            began = time.perf_counter()
            solve(spec, roots=[directory])
            ours.append(time.perf_counter() - began)
            theirs.append(row.alternative(spec, directory)[0])
        seconds, peer_seconds = float(np.median(ours)), float(np.median(theirs))
    optimum = tight_logistic_optimum(spec, directory) if row.peer == "scikit-learn" else \
        peer_objective
    point = result.projected if result.projected is not None else result.mean
    return {"seconds": seconds, "peer_seconds": peer_seconds, "objective": point.objective,
            "max_violation": point.max_violation, "peer_objective": peer_objective,
            "optimum": min(optimum, point.objective if point.max_violation <= 1e-9
                           else np.inf),
            "method": result.algorithm,
            "stats": {k: result.stats[k] for k in ("stopped_by", "method_reason", "iterations",
                                                    "gap", "relative_gap") if k in result.stats}}


SPECIAL = {
    "max_of": ("max of 3 logistic terms, d = 8, 1,800 rows (600 quick)", "CVXPY+Clarabel",
               run_max_of),
    "adult-rates": ("Adult, 0.95 TPR(all) <= TPR(G) <= TPR(all)/0.95, 6 sex x race cells "
                    "(a quarter of the rows quick)", "fairlearn EG", run_adult_rates),
    "mlp": ("MLP 64-32-1 on digits (>= 5), 1,257 training images", "scikit-learn MLP", run_mlp),
    "mlp-l2": ("the same MLP, l2 = 1e-4 (scikit-learn: alpha = l2 n)", "scikit-learn MLP",
               lambda directory, quick: run_mlp(directory, quick, l2=1e-4)),
    "file-defaults": ("logistic over an svmlight file, 200,000 x 100 sparse (20,000 quick)",
                      "scikit-learn",
                      lambda directory, quick: run_file(directory, quick, svrg=False)),
    "file-svrg_ol": ("the same file partitioned, solver.algorithm svrg_ol", "scikit-learn",
                     lambda directory, quick: run_file(directory, quick, svrg=True)),
}
#: The peers' time targets: LightTouch's seconds at most this many times theirs.
TIME_TARGET = {"adult-logistic": 2.0, "logistic-m0": 2.0, "adult-rates": 1.0}


def finish(name: str, shape: str, peer: str, numbers: dict) -> dict:
    """The row: its numbers, the time ratio, quality and whether each target is met."""
    row = {"name": name, "shape": shape, "peer": peer, **numbers}
    row["time_ratio"] = numbers["seconds"] / max(numbers["peer_seconds"], 1e-9)
    if "optimum" in numbers:
        row["excess"] = (numbers["objective"] - numbers["optimum"]) / \
            max(abs(numbers["optimum"]), 1e-12)
        row["quality_met"] = bool(row["excess"] <= 0.01)
    else:
        row["excess"] = numbers["test_error"] - numbers["peer_test_error"]
        row["quality_met"] = bool(row["excess"] <= 0.003 and
                                  numbers.get("train_ratio_min", 1.0) >= 0.95 - 1e-3)
    row["time_met"] = bool(row["time_ratio"] <= TIME_TARGET.get(name, 1.5))
    row["time_limit_met"] = numbers["stats"].get("stopped_by") != "time_limit"
    return row


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table (docs/method-choice.md)."""
    lines = ["| problem | auto ran | stopped by | LightTouch s | peer | peer s | ratio | "
             "quality |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        quality = f"{100 * row['excess']:+.3f}%" if "optimum" in row else \
            f"test error {100 * row['test_error']:.2f}% vs {100 * row['peer_test_error']:.2f}%"
        lines.append(f"| {row['shape']} | {row['method']} | "
                     f"{row['stats'].get('stopped_by', '-')} | {row['seconds']:.2f} | "
                     f"{row['peer']} | {row['peer_seconds']:.2f} | {row['time_ratio']:.2f}x | "
                     f"{quality} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    """Time ratios (log scale), green where the quality target is met."""
    figure, axis = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    ratios = [row["time_ratio"] for row in rows]
    colors = ["tab:green" if row["quality_met"] else "tab:red" for row in rows]
    axis.barh([row["name"] for row in rows], ratios, color=colors)
    axis.axvline(1.5, color="gray", linestyle="--", linewidth=1)
    axis.set_xscale("log")
    axis.invert_yaxis()
    axis.set_xlabel("LightTouch defaults seconds / peer seconds (green: within the quality "
                    "target)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (minutes)")
    parser.add_argument("--only", nargs="*", help="row names to run")
    parser.add_argument("--time-limit", type=float, help="solver.time_limit_s for every "
                        "row (a solver block: leave out for pure defaults)")
    args = parser.parse_args()
    TIME_LIMIT[0] = args.time_limit
    stem = "defaults_matrix_quick" if args.quick else "defaults_matrix"
    if args.only:   # a partial run keeps its own files beside the full table's
        stem += "_" + "_".join(args.only)
    rows: list[dict] = []
    warm_up()      # what a queue worker does before its first job: no row pays numba's
    warm_peers()   # loading or compiling, nor a peer its first call

    def keep(row: dict) -> None:
        """Add a row, print it and save every row so far (a long run keeps what it did)."""
        rows.append(row)
        print(table(rows[-1:]).splitlines()[-1], flush=True)
        (RESULTS / f"{stem}.json").write_text(json.dumps(
            {"quick": args.quick, "time_limit_s": args.time_limit, "rows": rows}, indent=2,
            default=float))

    with tempfile.TemporaryDirectory() as scratch:
        for row in convex_rows(args.quick):
            if args.only and row.name not in args.only:
                continue
            directory = Path(scratch) / row.name
            directory.mkdir()
            keep(finish(row.name, row.shape, row.peer,
                        run_convex(row, directory, args.time_limit)))
        for name, (shape, peer, run) in SPECIAL.items():
            if args.only and name not in args.only:
                continue
            directory = Path(scratch) / name
            directory.mkdir(exist_ok=True)
            keep(finish(name, shape, peer, run(directory, args.quick)))
    plot(rows, RESULTS / f"{stem}.png")
    print(table(rows))


if __name__ == "__main__":
    main()
