"""The paper's lattice from raw pairs on a Dask cluster: a ``calibrated_lattice`` (12
increasing inputs, keypoints [0, 1]: d = 4,096, m = 24,576) on two parquet tables of k x
612,587 raw pairs, solved as a user would, on a ``LocalCluster`` of 2 single-threaded worker
processes given by ``LIGHTTOUCH_DASK_SCHEDULER``, beside the in-memory solve.

Rows per scale k (``--scales``):

``cluster``
    ``lighttouch solve`` with the scheduler's address set, under the default per-job budget
    (half the machine). At the ``--as-is`` scales (past the budget: 20x on this machine) the
    spec is the user's, unchanged, and ``auto`` places it on the cluster by itself; at the
    others it asks for ``solver.workers: 2`` (within the budget it would stay in process).
``in_process`` (``--in-process`` scales)
    ``lighttouch solve`` with no scheduler, under the same budget: the tables read whole.

Both run ``bench.table_lattice_scale.defaults_spec`` (no ``solver`` block) plus
``--time-limit`` when given. Each solve is its own process, so the driver's peak memory is its
own (its ``VmHWM``, read while it runs); the cluster's workers are restarted before each
run and asked for their own ``VmHWM`` after it. From each Result: wall, placement, method,
communication rounds and bytes moved, the answer's objective and violation, the certified
lower bound and gap.

Usage::

    python -m bench.raw_pairs_cluster --scales 1 10 20 --as-is 20 --in-process 1 \
        [--time-limit 600]

Writes ``bench/results/raw_pairs_cluster.json`` after each run (the machine's load and the
commit with it). Tables are written once under ``--cache-dir``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.scale_out import commit, own_peak
from bench.table_lattice import write_pairs
from bench.table_lattice_scale import defaults_spec
from worker.datasets.lattice import PAPER_PAIRS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "raw_pairs_cluster.json"
#: Rows of a parquet row group: partitions are cut at row groups, so a table written as one
#: group would be one partition, read by one worker.
GROUP_ROWS = 2**16
#: The Result ``stats`` a row keeps.
KEPT = ("placement", "placement_reason", "method", "in_process_bytes_estimate",
        "driver_bytes_estimate", "worker_bytes_estimate", "max_job_bytes", "partitions",
        "communication_rounds", "bytes_moved", "iterations", "stopped_by", "solve_s",
        "lower_bound", "lower_bound_status", "lower_bound_s", "relative_gap", "wall_s")


def tables(cache: Path, scale: int) -> tuple[Path, dict]:
    """The directory of ``scale`` x the paper's raw pairs (written once) and their
    references."""
    directory = cache / f"x{scale}"
    references = directory / "tables.json"
    if not references.exists():
        directory.mkdir(parents=True, exist_ok=True)
        written = write_pairs(directory, scale * PAPER_PAIRS, scale, hand_built=False,
                              group_rows=GROUP_ROWS)[0]
        references.write_text(json.dumps(written))
    return directory, json.loads(references.read_text())


def worker_peaks(client) -> list[int]:
    """Each worker process's own peak resident bytes since its ``exec`` (``VmHWM``)."""
    return sorted(client.run(own_peak).values())


def peak_while_running(child: subprocess.Popen) -> int:
    """The child's ``VmHWM`` (its own peak resident bytes since its ``exec``) as last read
    before it exits, read every 0.2 s: its ``ru_maxrss`` would start at this process's
    peak, which a child started by ``vfork`` and ``exec`` inherits."""
    peak, status = 0, Path(f"/proc/{child.pid}/status")
    while child.poll() is None:
        with contextlib.suppress(OSError):
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
        time.sleep(0.2)
    return peak


def run_solve(directory: Path, spec: dict, name: str, environment: dict) -> dict:
    """One ``lighttouch solve`` of ``spec`` in its own process: the Result's figures, its
    wall and its peak memory."""
    spec_path, out = directory / f"spec_{name}.json", directory / f"result_{name}.json"
    spec_path.write_text(json.dumps(spec))
    env = {key: value for key, value in os.environ.items()
           if key not in ("LIGHTTOUCH_DASK_SCHEDULER", "LIGHTTOUCH_MAX_JOB_BYTES")}
    env |= {"PYTHONPATH": str(ROOT), "LIGHTTOUCH_DATA_ROOTS": str(directory), **environment}
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errors:
        child = subprocess.Popen([sys.executable, "-m", "service.cli", "solve", "-q", "-o",
                                  str(out), str(spec_path)], env=env, cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=errors, text=True)
        peak = peak_while_running(child)
        errors.seek(0)
        message = errors.read()
    wall = time.perf_counter() - began
    row = {"run": name, "wall_s": wall, "driver_peak_bytes": peak,
           "load_average": os.getloadavg()[0]}
    if child.returncode != 0:
        return row | {"error": message[-3000:]}
    result = json.loads(out.read_text())
    stats = result["stats"]
    return row | {key: stats.get(key) for key in KEPT} | {
        "objective": result["expected"]["objective"],
        "max_violation": result["expected"]["max_violation"],
        "members": [member["kind"] for member in result["mixture"]]}


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 20])
    parser.add_argument("--in-process", type=int, nargs="*", default=[1])
    parser.add_argument("--as-is", type=int, nargs="*", default=[20])
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "cache" / "raw_pairs")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from worker.settings import default_max_job_bytes

    record = json.loads(args.output.read_text()) if args.output.exists() else {"runs": []}
    budget = default_max_job_bytes()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        for scale in args.scales:
            directory, references = tables(args.cache_dir, scale)
            spec = defaults_spec(references)
            if args.time_limit is not None:
                spec["solver"] = {"time_limit_s": args.time_limit}
            asked = spec if scale in args.as_is else \
                spec | {"solver": spec.get("solver", {}) | {"workers": 2}}
            runs = [("cluster", asked, {"LIGHTTOUCH_DASK_SCHEDULER": cluster.scheduler_address})]
            if scale in args.in_process:
                runs.append(("in_process", spec, {}))
            for name, run_spec, environment in runs:
                client.restart()
                row = run_solve(directory, run_spec, f"{name}_x{scale}", environment)
                row |= {"scale": scale, "pairs": scale * PAPER_PAIRS, "commit": commit(),
                        "time_limit_s": args.time_limit, "budget_bytes": budget}
                if name == "cluster":
                    row["worker_peak_bytes"] = worker_peaks(client)
                record["runs"].append(row)
                print(json.dumps(row)[:1500], flush=True)
                args.output.parent.mkdir(parents=True, exist_ok=True)
                args.output.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
