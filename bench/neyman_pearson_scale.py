"""Neyman-Pearson on UCI Adult at K times its rows: the least false positive rate at a
training true positive rate >= 0.8 (the spec of bench/neyman_pearson.py), solved in memory,
on partitions read in this process and on partitions read by a LocalCluster of 2 workers.

The rows are bench/adult_scale_data.py's K x draws of the fit split with noise on the numeric
columns (an svmlight file with the labels in it, written once under ``--cache-dir``). The
objective is ``{"type": "rate", "metric": "false_positive_rate"}`` on them, the constraint
``true_positive_rate >= 0.8``, solved by ``auto`` with ``solver.seed`` 0 and a fixed
``solver.iterations`` (:data:`ITERATIONS`; the default stopping rule runs far longer at
these sizes: docs/scale.md#a-rate-as-the-objective-on-partitions), the other settings the
defaults; past 2^17 rows the partitioned runs play the game on
rounds of sampled rows (docs/scale.md#a-rate-as-the-objective-on-partitions). Each solve
runs in this process, timed from the spec to the Result (the files parsed each time: the
parsed-data cache is off). Scores: the Result's (the expected training rates over the
mixture, on every row) and the mixture's expected false and true positive rates on the test
file.

Usage::

    PYTHONPATH=. .venv/bin/python bench/neyman_pearson_scale.py [--scales 10 100] \
        [--iterations 65536]

Writes ``bench/results/neyman_pearson_scale.json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time
from pathlib import Path

import numpy as np

from bench.adult_scale_data import Source, generate, template_spec
from bench.neyman_pearson import CONSTRAINT, rates
from worker import solve
from worker.datasets.adult import Split

RESULTS = Path(__file__).resolve().parent / "results"
#: Where bench/adult_scale.py writes the K x rows too.
CACHE = Path(__file__).resolve().parent / "cache" / "adult_scale"
#: The game's iterations (fixed: module docstring).
ITERATIONS = 2**16
#: solver.workers of each run (None: in memory).
RUNS = {"in memory": None, "partitions, this process": 0, "partitions, 2 workers": 2}


def neyman_pearson_spec(scaled: dict, iterations: int) -> dict:
    """The K x rows' spec (:func:`bench.adult_scale_data.scaled_spec`) with the rate
    objective and the true positive rate floor, ``auto`` for ``iterations``."""
    data = copy.deepcopy(scaled["objective"]["data"])
    data.pop("groups", None)
    return {"objective": {"type": "rate", "metric": "false_positive_rate", "data": data},
            "constraints": [CONSTRAINT],
            "solver": {"algorithm": "auto", "seed": 0, "iterations": iterations}}


def test_rates(result, split: Split) -> dict[str, float]:
    """The mixture's expected false and true positive rates on ``split`` (the solutions'
    width is the K x rows' last column used; the columns after it weigh 0)."""
    solutions = np.zeros((len(result.mixture), split.features.shape[1]))
    for row, member in zip(solutions, result.mixture, strict=True):
        row[:len(member.solution)] = member.solution
    weights = np.array([member.weight for member in result.mixture])
    positive = (split.features @ solutions.T > 0).astype(float) @ weights
    return rates(positive, split.labels)


def one_run(spec: dict, workers: int | None, test: Split, root: Path) -> dict:
    """One solve with ``workers`` (its files under the data root ``root``) and its
    figures."""
    spec = copy.deepcopy(spec)
    if workers is not None:
        spec["solver"]["workers"] = workers
    load = os.getloadavg()
    began = time.perf_counter()
    result = solve(spec, roots=[root])
    stats = result.stats
    return {"workers": workers, "loadavg_before": load, "wall_s": time.perf_counter() - began,
            "training_fpr": result.expected.objective,
            "max_violation": result.expected.max_violation,
            "test": test_rates(result, test), "support": len(result.mixture),
            **{key: stats.get(key) for key in ("placement", "stopped_by", "iterations",
                                               "rounds", "communication_rounds",
                                               "method_reason")}}


def main(argv: list[str] | None = None) -> None:
    """Generate (or find) each scale's rows, then solve and record each run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="*", default=[10, 100])
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    os.environ["LIGHTTOUCH_DATA_CACHE_BYTES"] = "0"
    source = Source()
    template = template_spec(source, args.cache_dir, 5000, 0)
    record = {"cpus": os.cpu_count(), "iterations": args.iterations, "runs": []}
    for scale in args.scales:
        generation = generate(source, args.cache_dir, scale, template)
        scaled = json.loads((args.cache_dir / f"x{scale}" / "spec.json").read_text())
        spec = neyman_pearson_spec(scaled, args.iterations)
        for label, workers in RUNS.items():
            row = {"scale": scale, "rows": generation["rows"], "run": label} | one_run(
                spec, workers, source.test, args.cache_dir)
            record["runs"].append(row)
            print(json.dumps(row), flush=True)
            (RESULTS / "neyman_pearson_scale.json").write_text(
                json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
