"""Cotter, Jiang, Sridharan (2019) §6.2 / Table 2 on UCI Adult: equal opportunity for female,
male, black and white (TPR(G) >= 95% of TPR(all)), linear hinge-loss models.

Rows: the unconstrained baseline (its shrunk answer: the lowest-objective candidate), the
Lagrangian on the hinge-relaxed constraints (theta-bar: uniform over the 100 candidates; LP:
the shrunk mixture on the original constraints), the proxy-Lagrangian (theta-bar: weighted by
lambda_1; LP), and the §6.2 best single model of the proxy run. Columns: support, error and
each TPR ratio, on test and training data, for the *stochastic* classifier (expected over
the mixture). The Lagrangian and the proxy-Lagrangian run again with the non-convex ramp
bound (``solver.game.proxy: "ramp"``) in place of the hinge. 5,000 iterations with
minibatches of 100 and a candidate every 50 iterations, as the paper. Writes
bench/results/adult_fairness.json and prints the table.

Run: ``.venv/bin/python bench/adult_fairness.py``
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from worker.algorithms.registry import run_algorithm
from worker.datasets.adult import Split, adult_spec, load_adult, true_positive_ratios
from worker.pipeline.solve import solver_options, summarize
from worker.problem.compile import DataSource, compile_problem
from worker.spec.models import parse_spec

RESULTS = Path(__file__).resolve().parent / "results" / "adult_fairness.json"
ITERATIONS = 5000


def evaluate(split: Split, solutions: np.ndarray, weights: np.ndarray) -> dict:
    """Error and TPR ratios (percent) of the stochastic classifier, expected over weights."""
    keep = weights > 0
    predicted = ((split.features @ solutions[keep].T) > 0).astype(np.float64) @ weights[keep]
    error = np.mean(np.where(split.labels > 0, 1.0 - predicted, predicted))
    ratios = true_positive_ratios(split, predicted)
    return {"error": 100 * float(error), **{k: 100 * v for k, v in ratios.items()}}


def run(train: Split, directory: Path, algorithm: str, constrained: bool, proxy: str):
    """(trajectory, result) of one solve, through the pipeline pieces (to see theta-bar)."""
    spec = parse_spec(adult_spec(train, directory, algorithm=algorithm, iterations=ITERATIONS,
                                 constrained=constrained, game={"proxy": proxy}))
    spec.output.single = True
    problem = compile_problem(spec, DataSource([directory]))
    trajectory = run_algorithm(problem, solver_options(spec.solver))
    return trajectory, summarize(problem, trajectory, True, False, with_single=True)


def rows(train: Split, test: Split, directory: Path) -> list[dict]:
    table = []

    def add(name, solutions, weights, seconds):
        table.append({"model": name, "support": int(np.count_nonzero(weights)),
                      "test": evaluate(test, solutions, weights),
                      "train": evaluate(train, solutions, weights), "solve_s": seconds})

    for label, algorithm, constrained, proxy in [
            ("Baseline", "proxy_lagrangian", False, "hinge"),
            ("Lagrangian", "lagrangian", True, "hinge"),
            ("Proxy", "proxy_lagrangian", True, "hinge"),
            ("Lagrangian, ramp", "lagrangian", True, "ramp"),
            ("Proxy, ramp", "proxy_lagrangian", True, "ramp")]:
        began = time.perf_counter()
        trajectory, result = run(train, directory, algorithm, constrained, proxy)
        seconds = time.perf_counter() - began
        solutions = np.array(trajectory.candidates.solutions)
        shrunk = np.array([m.solution for m in result.mixture])
        weights = np.array([m.weight for m in result.mixture])
        if constrained:
            add(f"{label} (theta-bar)", solutions, trajectory.baseline, seconds)
        add(f"{label} (LP)" if constrained else label, shrunk, weights, seconds)
        if label == "Proxy":
            add("Proxy (best single, §6.2)", np.array([result.single.solution]),
                np.ones(1), seconds)
    return table


def format_table(table: list[dict]) -> str:
    groups = ("female", "male", "black", "white")
    head = f"{'model':30} {'supp':>4} {'error':>6} " + " ".join(
        f"{g[:6]:>6}" for g in groups) + " | " + " ".join(f"{g[:6]:>6}" for g in groups)
    lines = [f"{'':42} {'testing':^27} | {'training':^27}", head]
    for row in table:
        test = " ".join(f"{row['test'][g]:6.1f}" for g in groups)
        train = " ".join(f"{row['train'][g]:6.1f}" for g in groups)
        lines.append(f"{row['model']:30} {row['support']:4d} {row['test']['error']:5.1f}% "
                     f"{test} | {train}")
    return "\n".join(lines)


def main() -> None:
    train, test = load_adult()
    with tempfile.TemporaryDirectory() as scratch:
        table = rows(train, test, Path(scratch))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"iterations": ITERATIONS, "rows": table}, indent=2) + "\n")
    print(format_table(table))
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
