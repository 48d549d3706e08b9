"""Where the exact methods stop paying: the seconds of ``exact_qp`` (hinge LP) and
``exact_conic`` (logistic) against the program's size, for the size rule of
:mod:`worker.algorithms.method_choice`.

Dense Gaussian rows (n, d) and 10 linear constraints; sparse pairwise-ranking rows on a
monotone lattice (d = 64 to 512). For each: n, d, m, the rule's ``exact_work`` and the
seconds of the method alone (no data loading, no scoring). ``EXACT_MAX_WORK`` is set where
these seconds pass what the LightTouch family takes on the rows of ``defaults_matrix.py``
(docs/method-choice.md); the plot marks :data:`BUDGET_S` for orientation.

Writes bench/results/method_crossover.json and a PNG of seconds against exact_work.

Run: ``PYTHONPATH=. .venv/bin/python bench/method_crossover.py`` (some 3 minutes;
``--rework`` recomputes the work column of the stored rows without timing them again)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from defaults_rows import classification, feasible_rows  # noqa: E402

from worker.algorithms.exact.exact import run_exact_conic, run_exact_qp  # noqa: E402
from worker.algorithms.method_choice import exact_work  # noqa: E402
from worker.algorithms.run.options import SolverOptions  # noqa: E402
from worker.problem.compiled import LOSS_CODES, CompiledProblem, ConstraintSet, Objective  # noqa: E402,E501
from worker.problem.lattice_rows import lattice_edges  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
BUDGET_S = 2.0
DENSE = [(1000, 10), (1000, 40), (4000, 10), (4000, 40), (4000, 80), (16000, 10),
         (16000, 40), (20000, 50), (32000, 50)]
LATTICE = [([4, 4, 4], 5000), ([8, 8, 4], 10000), ([8, 8, 8], 10000)]


def dense_problem(loss: str, n: int, d: int) -> CompiledProblem:
    """Gaussian rows with a bias column, 10 linear rows (unit norm), box [-10, 10]."""
    x, y = classification(n, d, seed=n + d)
    a, b = feasible_rows(10, d, seed=d)
    norms = np.linalg.norm(a, axis=1)
    objective = Objective(LOSS_CODES[loss], sp.csr_matrix(x), y, sp.csr_matrix((d, d)),
                          np.zeros(d), 1e-3 if loss == "logistic" else 0.0)
    return CompiledProblem(objective, ConstraintSet(sp.csr_matrix(a / norms[:, None]),
                                                    b / norms), np.full(d, -10.0),
                           np.full(d, 10.0))


def lattice_problem(loss: str, shape: list[int], n: int) -> CompiledProblem:
    """Differences of two rows of 3 random vertices each, monotone along every axis."""
    d = int(np.prod(shape))
    rng = np.random.default_rng(d)
    cols = rng.integers(d, size=(n, 6))
    data = np.tile([1 / 3, 1 / 3, 1 / 3, -1 / 3, -1 / 3, -1 / 3], n)
    x = sp.csr_matrix((data, cols.ravel(), np.arange(0, 6 * n + 1, 6)), shape=(n, d))
    x.sum_duplicates()
    pairs = lattice_edges(shape, list(range(len(shape))), d, "constraints[0]")
    objective = Objective(LOSS_CODES[loss], x, np.where(rng.uniform(size=n) < 0.7, 1.0, -1.0),
                          sp.csr_matrix((d, d)), np.zeros(d),
                          1e-3 if loss == "logistic" else 0.0)
    return CompiledProblem(objective, ConstraintSet.of_orderings(pairs, d),
                           np.zeros(d), np.ones(d))


def timed(problem: CompiledProblem, loss: str) -> dict:
    """The exact method's seconds and status on ``problem``."""
    runner = run_exact_conic if loss == "logistic" else run_exact_qp
    began = time.perf_counter()
    trajectory = runner(problem, SolverOptions(), None, time.perf_counter() + 300)
    return {"loss": loss, "n": problem.n, "d": problem.d, "m": problem.m,
            "nnz": int(problem.objective.features.nnz), "exact_work": exact_work(problem),
            "seconds": time.perf_counter() - began,
            "stopped_by": trajectory.as_stats()["stopped_by"]}


def problems():
    """(loss, shape name, problem) of every row, in order."""
    for loss in ("hinge", "logistic"):
        for n, d in DENSE:
            yield loss, "dense", dense_problem(loss, n, d)
        for shape, n in LATTICE:
            yield loss, "lattice", lattice_problem(loss, shape, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rework", action="store_true", help="recompute exact_work of the "
                        "stored rows (same problems) after a change of the rule, and replot")
    path = RESULTS / "method_crossover.json"
    if parser.parse_args().rework:
        rows = json.loads(path.read_text())["rows"]
        for row, (_, _, problem) in zip(rows, problems(), strict=True):
            row["exact_work"] = exact_work(problem)
    else:
        rows = []
        for loss, shape, problem in problems():
            rows.append(timed(problem, loss) | {"shape": shape})
            print(rows[-1], flush=True)
    path.write_text(json.dumps({"budget_s": BUDGET_S, "rows": rows}, indent=2))
    plot(rows)


def plot(rows: list[dict]) -> None:
    """Seconds against exact_work, one series per loss and shape."""
    figure, axis = plt.subplots(figsize=(6, 4))
    for (loss, shape), marker in zip([(lo, sh) for lo in ("hinge", "logistic")
                                      for sh in ("dense", "lattice")], "osv^", strict=True):
        chosen = [r for r in rows if r["loss"] == loss and r["shape"] == shape]
        axis.loglog([r["exact_work"] for r in chosen], [r["seconds"] for r in chosen],
                    marker, label=f"{loss}, {shape}")
    axis.axhline(BUDGET_S, color="gray", linestyle="--", linewidth=1)
    axis.set_xlabel("exact_work (method_choice)")
    axis.set_ylabel("seconds of the exact method")
    axis.legend()
    figure.tight_layout()
    figure.savefig(RESULTS / "method_crossover.png", dpi=120)


if __name__ == "__main__":
    main()
