"""The like-for-like LightTouch model for raw ranking inputs, beside XGBoost: a
``calibrated_lattice`` on the D = 8 raw inputs of the pairs ``bench/scale_out.py`` and
``bench/xgboost_ranking.py`` train on (the paper's 612,587 pairs of
``worker.datasets.lattice``'s generator), each input calibrated by ``--keypoints`` keypoints
at its quantiles onto a lattice axis of ``--sizes`` vertices, every input increasing (the
truth increases in each), with no ``solver`` block but ``workers: 2``: the tables stay in
partitions on a ``LocalCluster`` of 2 single-threaded workers and the calibration comes from
the sample round (docs/scale.md#raw-tables-of-a-calibrated-model). In the same run, on the
same cluster, XGBoost's ``rank:pairwise`` with every input increasing
(:func:`bench.scale_out.one_run`). Every model is scored on the same 100,000 held-out pairs:
the fraction where score(x+) > score(x-), LightTouch's by its Result's deterministic model
and its mixture's expected score on the raw rows (:class:`worker.mixture.Mixture`).

Usage::

    python -m bench.calibrated_ranking --sizes 2 3 [--keypoints 10]

Writes ``bench/results/calibrated_ranking.json`` (with the machine load and the commit).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench import xgboost_ranking
from bench.scale_out import DIMS, XGBOOST_LABEL, commit, one_run
from worker.datasets.lattice import BOX_BOUND, PAPER_PAIRS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "calibrated_ranking.json"
NAMES = [f"x{j}" for j in range(DIMS)]
GROUP_ROWS = 2**16


def raw_tables(directory: Path) -> dict:
    """The training pairs' raw inputs as two parquet tables (written once); their
    references."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {side: directory / f"{side}.parquet" for side in ("positive", "negative")}
    if not all(path.exists() for path in paths.values()):
        sides = xgboost_ranking.raw_pairs(PAPER_PAIRS, DIMS, xgboost_ranking.TRAINING_SEED)
        for path, x in zip(paths.values(), sides, strict=True):
            pq.write_table(pa.table(dict(zip(NAMES, x.T, strict=True))), path,
                           row_group_size=GROUP_ROWS)
    return {side: {"uri": path.as_uri()} for side, path in paths.items()}


def spec_for(tables: dict, size: int, keypoints: int) -> dict:
    """The calibrated lattice on the raw tables, defaults but ``workers: 2``."""
    return {"bounds": {"lower": -BOX_BOUND, "upper": BOX_BOUND},
            "model": {"type": "calibrated_lattice", "lattice": {"sizes": [size] * DIMS},
                      "features": [{"column": name, "keypoints": keypoints,
                                    "monotonic": "increasing"} for name in NAMES]},
            "objective": {"type": "empirical_risk", "loss": "pairwise_hinge",
                          "data": tables},
            "solver": {"workers": 2}}


def lattice_row(spec: dict, directory: Path, scheduler: str) -> dict:
    """One solve on the cluster, timed, scored on the held-out pairs' raw rows."""
    from worker import solve
    from worker.mixture import Mixture
    from worker.settings import job_settings

    os.environ["LIGHTTOUCH_DASK_SCHEDULER"] = scheduler
    began = time.perf_counter()
    result = solve(spec, settings=job_settings(None, [directory]))
    wall = time.perf_counter() - began
    mixture = Mixture.from_result(result)
    held = [dict(zip(NAMES, x.T, strict=True)) for x in xgboost_ranking.held_out(DIMS)]
    stats = result.stats
    return {
        "model": "calibrated_lattice", "wall_s": wall, "method": stats.get("method"),
        "parameters": len(result.deterministic.solution),
        "objective": result.expected.objective, "relative_gap": stats.get("relative_gap"),
        "iterations": stats.get("iterations"), "partitions": stats.get("partitions"),
        "heldout_accuracy": xgboost_ranking.pairwise_accuracy(
            *(mixture.score(rows, "deterministic") for rows in held))["heldout_accuracy"],
        "heldout_accuracy_mixture": xgboost_ranking.pairwise_accuracy(
            *(mixture.score(rows, "expected") for rows in held))["heldout_accuracy"],
        "load_average": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--keypoints", type=int, default=10)
    parser.add_argument("--cache-dir", type=Path,
                        default=ROOT / "bench" / "cache" / "calibrated_ranking")
    args = parser.parse_args(argv)
    from distributed import LocalCluster

    tables = raw_tables(args.cache_dir)
    record = {"pairs": PAPER_PAIRS, "keypoints": args.keypoints, "commit": commit(),
              "truth": xgboost_ranking.truth_accuracy(DIMS), "runs": []}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster:
        for size in args.sizes:
            row = lattice_row(spec_for(tables, size, args.keypoints), args.cache_dir,
                              cluster.scheduler_address) | {"sizes": size}
            record["runs"].append(row)
            print(json.dumps(row), flush=True)
            RESULTS.write_text(json.dumps(record, indent=2) + "\n")
        row = one_run(cluster, 1, XGBOOST_LABEL, 2, "parquet", args.cache_dir)
        record["runs"].append({key: value for key, value in row.items()
                               if not isinstance(value, list) or key.endswith("peak_bytes")}
                              | {"model": "xgboost"})
        RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record["runs"][-1]))


if __name__ == "__main__":
    main()
