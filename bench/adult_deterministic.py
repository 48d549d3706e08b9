"""What a deterministic model loses on UCI Adult: the proxy-Lagrangian's m+1 mixture against
the Result's deterministic model (least objective among the candidates within the tolerance,
:mod:`worker.candidates.deterministic`) and the §6.2 rank heuristic's single model
(``output.single``), under the equal-opportunity constraints of Cotter et al. (2019) §6.2.

Each run trains on the official training file (the paper's 5,000 iterations) with the
official test file as the spec's ``validation`` data, so every number comes from the
Result's ``report``: error and each constraint g = 0.95 TPR(all) - TPR(G) (<= 0 holds) on
training and test data, the rates with 95% bootstrap intervals on test. Three solver seeds.
Writes bench/results/adult_deterministic.json and prints a table.

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/adult_deterministic.py`` (a few minutes)
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from worker import solve
from worker.datasets.adult import adult_spec, load_adult
from worker.mixture import Mixture

RESULTS = Path(__file__).resolve().parent / "results" / "adult_deterministic.json"
SEEDS = (0, 1, 2)
ITERATIONS = 5000


def run(seed: int, folder: Path) -> dict:
    """One seed: the report's numbers for the mixture and the deterministic model, and the
    §6.2 single model's test error and violation."""
    train, test = load_adult()
    spec = adult_spec(train, folder / "train", algorithm="proxy_lagrangian",
                      iterations=ITERATIONS, seed=seed)
    held = adult_spec(test, folder / "test", algorithm="proxy_lagrangian",
                      iterations=ITERATIONS)["objective"]["data"]
    spec["validation"] = held
    spec["output"]["single"] = True
    started = time.perf_counter()
    result = solve(spec, roots=[folder])
    seconds = time.perf_counter() - started
    report = result.report
    row = {"seed": seed, "seconds": seconds, "support": len(result.mixture)}
    for name in ("mixture", "deterministic"):
        for split, data in (("train", report.training), ("test", report.validation)):
            model = data.models[name]
            row[f"{name}_{split}_error"] = model.error
            row[f"{name}_{split}_max_violation"] = model.max_violation
            row[f"{name}_{split}_g"] = [c.worst for c in model.constraints]
    single = np.array(result.single.solution)
    mixture = Mixture(single[None, :], np.ones(1))
    test_features = test.features
    row["single_test_error"] = mixture.error_rate(test_features, test.labels)
    row["single_train_max_violation"] = result.single.max_violation
    return row


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        rows = [run(seed, Path(scratch) / str(seed)) for seed in SEEDS]
    RESULTS.write_text(json.dumps({"iterations": ITERATIONS, "rows": rows}, indent=2) + "\n")
    print(f"{'seed':>4} {'support':>7} {'mix test err':>12} {'det test err':>12} "
          f"{'6.2 test err':>12} {'mix test viol':>13} {'det test viol':>13}")
    for row in rows:
        print(f"{row['seed']:>4} {row['support']:>7} {row['mixture_test_error']:>12.4f} "
              f"{row['deterministic_test_error']:>12.4f} {row['single_test_error']:>12.4f} "
              f"{row['mixture_test_max_violation']:>13.4f} "
              f"{row['deterministic_test_max_violation']:>13.4f}")


if __name__ == "__main__":
    main()
