"""SVRG OL on sparse logistic regression: the shape of Cutkosky & Busa-Fekete's Figure 1
and Table 3 (loss versus examples processed and versus wall time; communication rounds).

Data: ``--rows`` examples over ``--features`` hashed binary features (power-law popularity,
``--nnz`` per row plus a bias column), labels drawn from a logistic model with a sparse true
w; written as svmlight on disk and read back through the data layer (``file://`` URI).
``--holdout`` more examples of the same model are kept out of training for the held-out
loss, the quantity of the paper's Figure 1.

==================  ===============================================================
method              what runs
==================  ===============================================================
svrg_ol/in-process  ``svrg_ol`` (AdaGrad base learner, practical schedule §8.3,
                    automatic T_0: ceil(log2(T)/2) rounds) run as ``solve`` runs it on a
                    file: the driver plans partitions of the svmlight file from its bytes
                    alone and the batch phase reads them, here in this process
svrg_ol/dask-2      the same with the batch phase on a Dask LocalCluster(2); workers
                    read their partitions from the svmlight file themselves
svrg_ol/freerex     as in-process with FreeRex (the paper's base learner)
adagrad-sgd         plain diagonal AdaGrad SGD, one example per step, ``--passes`` passes
l-bfgs              ``scipy.optimize.minimize(method="L-BFGS-B")`` on the full-data loss;
                    one pass (one communication round, distributed) per evaluation
==================  ===============================================================

Loss is the training objective (mean logistic loss), evaluated on the whole data set at
snapshots, and the mean logistic loss on the held-out examples. Examples processed count the
batch phases' examples. ``matched`` compares every method with AdaGrad SGD at the same
examples processed (AdaGrad's curve interpolated). Usage::

    python bench/svrg_ol.py                        # 2M rows, 2^20 features (~10 min)
    python bench/svrg_ol.py --rows 200000 --steps 200000   # a quick run
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.optimize import minimize
from sklearn.datasets import dump_svmlight_file

from worker.algorithms.registry import run_algorithm
from worker.algorithms.run.svrg_schedule import schedule
from worker.distributed.batch import DaskSettings, open_partitioned
from worker.distributed.partitions import plan_partitions
from worker.kernels.objective import loss_slope, row_dot
from worker.pipeline.options import solver_options, svrg_options
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings, read_settings
from worker.spec.models import parse_spec

RESULTS = Path(__file__).resolve().parent / "results"


def generate(path: Path, rows: int, features: int, nnz: int, seed: int,
             holdout: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Write ``rows`` examples as svmlight (module docstring); return ``holdout`` more,
    features (holdout, features) and labels (holdout,)."""
    rng = np.random.default_rng(seed)
    rows += holdout
    popularity = rng.zipf(1.3, size=(rows, nnz)) % (features - 1) + 1
    columns = np.sort(np.column_stack([np.zeros(rows, dtype=np.int64), popularity]), axis=1)
    x = sp.csr_matrix((np.ones(columns.size), columns.ravel(),
                       np.arange(0, columns.size + 1, nnz + 1)), shape=(rows, features))
    x.sum_duplicates()
    x.data[:] = 1.0
    truth = np.where(rng.uniform(size=features) < 0.05, rng.normal(0, 1.5, features), 0.0)
    truth[0] = -0.5
    probability = 1.0 / (1.0 + np.exp(-(x @ truth)))
    labels = np.where(rng.uniform(size=rows) < probability, 1.0, -1.0)
    train = rows - holdout
    dump_svmlight_file(x[:train], labels[:train], str(path), zero_based=True)
    return x[train:], labels[train:]


def spec_for(path: Path, features: int, steps: int, learner: str, workers: int) -> dict:
    return {"spec_version": 1,
            "objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": {"uri": path.as_uri(), "format": "svmlight",
                                                "zero_based": True, "n_features": features}}},
            "solver": {"algorithm": "svrg_ol", "iterations": steps, "candidates": 40,
                       "time_limit_s": 3600, "eta_w": 0.5,
                       "svrg": {"learner": learner, "workers": workers,
                                "partition_rows": 2**18}},
            "output": {"mixture": False, "project": False}}


def mean_loss(x: sp.csr_matrix, y: np.ndarray, w: np.ndarray) -> float:
    return float(np.logaddexp(0.0, -y * (x @ w)).mean())


def point(examples: int, seconds: float, train: tuple, held_out: tuple, w: np.ndarray) -> dict:
    """A curve point: training and held-out mean loss of w."""
    return {"examples": int(examples), "seconds": seconds, "loss": mean_loss(*train, w),
            "heldout": mean_loss(*held_out, w)}


def matched(curve: list[dict], reference: list[dict]) -> dict:
    """The method's last point and AdaGrad SGD's losses at its examples processed."""
    last = curve[-1]
    examples = [c["examples"] for c in reference]
    return {"examples": last["examples"], "loss": last["loss"], "heldout": last["heldout"],
            **{f"adagrad_{key}": float(np.interp(last["examples"], examples,
                                                 [c[key] for c in reference]))
               for key in ("loss", "heldout")}}


def run_svrg(path: Path, root: Path, features: int, steps: int, learner: str,
             workers: int, train: tuple, held_out: tuple) -> dict:
    """One svrg_ol job as :func:`worker.pipeline.solve` runs it on a file: the driver plans the
    partitions and the batch phase (in-process or Dask workers) reads them itself; the
    curve is scored on ``train`` and ``held_out`` (features, labels)."""
    model = parse_spec(spec_for(path, features, steps, learner, workers))
    data, cluster = data_settings(), read_settings(DaskSettings)
    svrg = svrg_options(model.solver.svrg, cluster)
    plan = plan_partitions(model, [root], svrg.partition_rows, cluster.partition_bytes, data)
    began = time.perf_counter()
    with open_partitioned(plan, svrg, model.solver.seed, data) as batch:
        problem = compile_problem(model, DataSource([root], data), width_elsewhere=batch.d)
        trajectory = run_algorithm(problem, solver_options(model.solver, cluster), source=batch)
        n = batch.n
    wall = time.perf_counter() - began
    rounds = schedule(svrg, steps)
    curve = []
    for solution, iteration, kind, seconds in zip(
            trajectory.candidates.solutions, trajectory.candidates.iterations,
            trajectory.candidates.kinds, trajectory.candidates.seconds, strict=True):
        if kind != "average":
            continue
        started = np.cumsum([0] + [r.serial_steps for r in rounds])
        batches = sum(min(r.batch_size, n) for r, s in zip(rounds, started, strict=False)
                      if s < iteration)
        curve.append(point(iteration + batches, seconds, train, held_out, solution))
    stats = trajectory.as_stats()
    return {"curve": curve, "wall_s": wall, "communication_rounds": stats["communication_rounds"],
            "bytes_moved": stats["bytes_moved"], "batch_s": stats["batch_s"],
            "partitions": len(plan.pieces), "final_loss": curve[-1]["loss"]}


@njit(cache=True)
def _adagrad_pass(indptr, indices, data, labels, w, squares, eta, order):
    for i in order:
        slope = loss_slope(1, row_dot(indptr, indices, data, i, w), labels[i])
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            g = slope * data[k]
            squares[j] += g * g
            if squares[j] > 0:
                w[j] -= eta * g / np.sqrt(squares[j])


def run_adagrad(x: sp.csr_matrix, y: np.ndarray, passes: int, eta: float,
                held_out: tuple) -> dict:
    """Plain diagonal AdaGrad SGD, snapshots every tenth of a pass."""
    rng = np.random.default_rng(0)
    w, squares = np.zeros(x.shape[1]), np.zeros(x.shape[1])
    curve, began, examples = [], time.perf_counter(), 0
    for _ in range(passes):
        for order in np.array_split(rng.integers(0, x.shape[0], x.shape[0]), 10):
            _adagrad_pass(x.indptr, x.indices, x.data, y, w, squares, eta, order)
            examples += order.size
            curve.append(point(examples, time.perf_counter() - began, (x, y), held_out, w))
    return {"curve": curve, "wall_s": time.perf_counter() - began,
            "communication_rounds": 0, "final_loss": curve[-1]["loss"]}


def run_lbfgs(x: sp.csr_matrix, y: np.ndarray, iterations: int, held_out: tuple) -> dict:
    """L-BFGS-B on the mean logistic loss; every evaluation is a pass (a round)."""
    curve, began = [], time.perf_counter()
    evaluations = [0]

    def loss_and_gradient(w):
        scores = x @ w
        evaluations[0] += 1
        slopes = -y / (1.0 + np.exp(y * scores))
        return float(np.logaddexp(0.0, -y * scores).mean()), (x.T @ slopes) / x.shape[0]

    def record(w):
        curve.append(point(evaluations[0] * x.shape[0], time.perf_counter() - began, (x, y),
                           held_out, w))

    minimize(loss_and_gradient, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B",
             callback=record, options={"maxiter": iterations})
    return {"curve": curve, "wall_s": time.perf_counter() - began,
            "communication_rounds": evaluations[0], "final_loss": curve[-1]["loss"]}


def plot(results: dict, rows: int, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("examples", "loss", "training loss"), ("examples", "heldout", "held-out loss"),
              ("seconds", "loss", "training loss"))
    figure, axes = plt.subplots(1, len(panels), figsize=(17, 4.5))
    for name, result in results.items():
        curve = result["curve"]
        label = f"{name} ({result['communication_rounds']} rounds)"
        for axis, (x, y, _) in zip(axes, panels, strict=True):
            scale = rows if x == "examples" else 1
            axis.plot([c[x] / scale for c in curve], [c[y] for c in curve], marker=".",
                      label=label)
    for axis, (x, y, title) in zip(axes, panels, strict=True):
        best = min(min(c[y] for c in r["curve"]) for r in results.values())
        axis.set_xlabel("examples processed / n (passes)" if x == "examples"
                        else "wall time (s)")
        axis.set_ylabel(title)
        axis.set_ylim(best * 0.99, best * 1.25)
        axis.set_xscale("log")   # from a fraction of a pass to L-BFGS's hundred passes
        axis.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    figure.suptitle(f"sparse logistic regression, n = {rows:,}")
    figure.tight_layout()
    figure.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--features", type=int, default=2**20)
    parser.add_argument("--nnz", type=int, default=15)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--holdout", type=int, default=None, help="default rows / 10")
    parser.add_argument("--name", default="svrg_ol")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / "train.svm"
        began = time.perf_counter()
        held_out = generate(path, args.rows, args.features, args.nnz, seed=0,
                            holdout=args.rows // 10 if args.holdout is None else args.holdout)
        print(f"generated {path.stat().st_size / 2**20:.0f} MB in "
              f"{time.perf_counter() - began:.1f} s", flush=True)
        problem = compile_problem(parse_spec(spec_for(path, args.features, 1, "adagrad", 0)),
                                  DataSource([root], data_settings()))
        x, y = problem.objective.features, problem.objective.labels
        results = {}
        for name, learner, workers in (("svrg_ol/in-process", "adagrad", 0),
                                       ("svrg_ol/dask-2", "adagrad", 2),
                                       ("svrg_ol/freerex", "freerex", 0)):
            results[name] = run_svrg(path, root, args.features, args.steps, learner, workers,
                                     (x, y), held_out)
            print(name, {k: v for k, v in results[name].items() if k != "curve"}, flush=True)
    results["adagrad-sgd"] = run_adagrad(x, y, args.passes, eta=0.5, held_out=held_out)
    print("adagrad-sgd", results["adagrad-sgd"]["final_loss"], flush=True)
    results["l-bfgs"] = run_lbfgs(x, y, iterations=100, held_out=held_out)
    print("l-bfgs", results["l-bfgs"]["final_loss"], flush=True)
    for name, result in results.items():
        result["matched"] = matched(result["curve"], results["adagrad-sgd"]["curve"])
        print(name, "vs adagrad-sgd", result["matched"], flush=True)
    RESULTS.mkdir(exist_ok=True)
    summary = {"rows": args.rows, "features": args.features, "nnz_per_row": args.nnz + 1,
               "holdout": held_out[1].size, "serial_steps": args.steps, "results": results}
    (RESULTS / f"{args.name}.json").write_text(json.dumps(summary, indent=1))
    plot(results, args.rows, RESULTS / f"{args.name}.png")


if __name__ == "__main__":
    main()
