"""L-BFGS-B against SVRG OL on examples left in partitions: a logistic fit (l2 = 1e-4, box
±5) on n rows of 30 Gaussian features in svmlight, cut in partitions of 100,000 rows, read
in this process (``workers`` 0) or by a ``LocalCluster`` of 2 single-threaded workers; both
methods run on the same partitions, each opened for it (so its rounds are its own), with
``iterations: "auto"``.
Per run: seconds, L-BFGS-B's evaluations or SVRG OL's serial steps, communication rounds
and the certified relative gap (each method's own certificate).

Usage::

    python -m bench.lbfgsb_partitions --rows 1000000 --workers 0 2

Writes ``bench/results/lbfgsb_partitions.json`` (with the machine load and the commit).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "lbfgsb_partitions.json"
FEATURES = 30
PARTITION_ROWS = 100_000


def data_file(cache: Path, rows: int) -> Path:
    """``rows`` labelled examples in svmlight, written once."""
    from sklearn.datasets import dump_svmlight_file

    path = cache / f"logistic_{rows}.svm"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(1)
        x = rng.normal(size=(rows, FEATURES))
        y = np.sign(x @ rng.normal(size=FEATURES) + rng.normal(size=rows))
        dump_svmlight_file(x, y, str(path))
    return path


def run(path: Path, workers: int) -> list[dict]:
    """Both methods on the partitions of ``path`` read where ``workers`` says."""
    from worker.algorithms.runners.lbfgsb import run_lbfgsb
    from worker.algorithms.runners.svrg_ol import run_svrg_ol
    from worker.pipeline.options import solver_options
    from worker.pipeline.prologue import compiled_job, lowered_job
    from worker.settings import job_settings
    from worker.spec.models import parse_spec

    spec = parse_spec({
        "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 1e-4,
                      "data": {"features": {"uri": path.as_uri()}}},
        "bounds": {"lower": -5, "upper": 5},
        "solver": {"algorithm": "svrg_ol", "seed": 1,
                   "svrg": {"workers": workers, "partition_rows": PARTITION_ROWS}}})
    settings = job_settings(None, [path.parent])
    lowered = lowered_job(spec, settings)
    options = solver_options(spec.solver, settings.cluster)
    rows = []
    for name, runner in (("lbfgsb", run_lbfgsb), ("svrg_ol", run_svrg_ol)):
        # each method on partitions of its own, so its rounds are counted alone
        with compiled_job(lowered.spec, lowered.source, settings) as job:
            began = time.perf_counter()
            trajectory = runner(job.problem, options, None, began + 3600, source=job.batch)
            stats = trajectory.stats.as_stats()
            rows.append({"workers": workers, "method": name,
                         "seconds": time.perf_counter() - began,
                         "evaluations": stats.get("evaluations"),
                         "serial_steps": stats.get("iterations") or None,
                         "communication_rounds": stats.get("communication_rounds"),
                         "stopped_by": stats.get("stopped_by"),
                         "lower_bound": stats.get("lower_bound"),
                         "relative_gap": stats.get("relative_gap"),
                         "load_average": os.getloadavg()[0]})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "cache" / "lbfgsb")
    args = parser.parse_args(argv)
    path = data_file(args.cache_dir, args.rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    record = {"rows": args.rows, "features": FEATURES, "partition_rows": PARTITION_ROWS,
              "commit": commit, "runs": []}
    for workers in args.workers:
        record["runs"] += run(path, workers)
        RESULTS.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
