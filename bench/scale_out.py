"""Pairs on a cluster: the LightTouch paper's lattice ranking pairs written as parquet, the
paper's 612,587 pairs (1x) and 10 copies of them (10x), solved with the tables left in
partitions on a Dask ``LocalCluster`` of 2 worker processes (``solver.workers: 2``, the
cluster given by ``LIGHTTOUCH_DASK_SCHEDULER``), beside the in-memory solve and the
partitioned plan in one process (``solver.workers: 0``) at 1x.

The lattice has D = 8 inputs (2^8 = 256 vertices, m = 1,024 monotonicity constraints) rather
than the paper's 12: a parquet table holds dense columns, and the in-memory solve of 4,096
dense columns would read 20 GB per table at 1x. Every run uses the paper's step sizes and
gamma (``worker.datasets.lattice.problem_spec``) and a fixed iteration count, so the rows
compare answers, not stopping rules.

Each run is its own process (``python bench/scale_out.py --run``), so the driver's peak
memory is its own; the bench restarts the cluster's workers before each run and asks each for
its own peak after it. A peak is the process's ``VmHWM`` (``/proc/self/status``): its
``ru_maxrss`` would start at its parent's peak, which a process started by ``vfork`` and
``exec`` inherits (the bench writes the tables, so its peak passes 1 GiB). From each Result:
wall time, the rounds and bytes moved, the mixture's objective and violation, the certified
gap when the job has one.

Reading a parquet table of 256 dense columns took most of a run's wall time at 1x, so the
larger scales can be written as npy tables (``--format npy``: ranged reads of raw rows).

At every scale, on the same cluster and the same pairs, XGBoost's ``rank:pairwise`` with
every raw input increasing (:mod:`bench.xgboost_ranking`: one query group of two items a
pair, the D raw inputs rather than the interpolation weights) is trained in its own process
too, its driver's and workers' peaks read the same way. Each run's model is scored after it
by the bench (outside the measured process) on held-out pairs of the same generator with
another seed: the fraction where score(x+) > score(x-), for LightTouch the deterministic
model's (score = interpolation weights . solution) and the mixture's expected one.

Usage::

    python bench/scale_out.py --scales 1,10 [--format npy] [--cache-dir bench/cache/scale_out]

(the ``bench`` extra: matplotlib and xgboost).

Writes ``bench/results/scale_out.json`` (with the machine load and the commit of each run)
after each run, keeping the rows of scales not run, and ``scale_out.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench import xgboost_ranking  # noqa: E402
from worker.datasets.lattice import PAPER_PAIRS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DIMS = 8
ITERATIONS = 400_000
GROUP_ROWS = 2**16
PARTITION_ROWS = 2**17
XGBOOST_LABEL = "XGBoost rank:pairwise on raw inputs, 2 Dask workers"


def write_tables(directory: Path, scale: int, file_format: str = "parquet") -> dict:
    """The paper's pairs (1x), or ``scale`` copies of the 1x tables (written beside it, under
    ``directory``'s parent), as positive and negative tables of ``file_format`` (parquet, or
    npy: C-ordered dense arrays), written once; the spec's data references. Copies of the
    same pairs have the 1x problem's optimum, so every scale answers one problem."""
    import numpy as np
    import pyarrow.parquet as pq

    paths = {side: directory / f"{side}.{file_format}" for side in ("positive", "negative")}
    if not all(path.exists() for path in paths.values()):
        directory.mkdir(parents=True, exist_ok=True)
        if scale == 1 and file_format == "parquet":
            _write_paper_pairs(paths)
        else:
            single = write_tables(directory.parent / "x1", 1)
            for side, path in paths.items():
                source = pq.ParquetFile(single[side]["uri"].removeprefix("file://"))
                if file_format == "npy":
                    block = source.read().to_pandas().to_numpy(dtype=np.float64)
                    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64,
                                                    shape=(scale * block.shape[0],
                                                           block.shape[1]))
                    for copy in range(scale):
                        out[copy * block.shape[0]:(copy + 1) * block.shape[0]] = block
                    out.flush()
                    del out
                    continue
                with pq.ParquetWriter(path, source.schema_arrow) as writer:
                    for _ in range(scale):
                        for group in range(source.num_row_groups):
                            writer.write_table(source.read_row_group(group))
    return {side: {"uri": path.as_uri(), "format": file_format}
            for side, path in paths.items()}


def _write_paper_pairs(paths: dict[str, Path]) -> None:
    """The paper's pairs (``make_ranking_problem``) in row groups of :data:`GROUP_ROWS`."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from worker.datasets.lattice import make_ranking_problem

    names = [f"v{j}" for j in range(2**DIMS)]
    schema = pa.schema([(name, pa.float64()) for name in names])
    positive, negative, _ = make_ranking_problem(PAPER_PAIRS, DIMS, seed=0)
    for side, matrix in (("positive", positive), ("negative", negative)):
        with pq.ParquetWriter(paths[side], schema) as writer:
            for start in range(0, matrix.shape[0], GROUP_ROWS):
                block = np.asarray(matrix[start:start + GROUP_ROWS].todense())
                writer.write_table(pa.table(list(block.T), names=names))


def spec_for(data: dict, workers: int | None) -> dict:
    """The paper's lattice spec on ``data`` with a fixed iteration count."""
    from worker.datasets.lattice import problem_spec

    spec = problem_spec(Path("p"), Path("n"), DIMS, seed=0, iterations=ITERATIONS,
                        algorithm="lighttouch", name=f"lattice pairs D={DIMS}")
    spec["objective"]["data"] = data
    spec["solver"].update(time_limit_s=3600, polish=False,
                          svrg={"partition_rows": PARTITION_ROWS})
    if workers is not None:
        spec["solver"]["workers"] = workers
    return spec


def run_child(spec: dict, roots: str) -> None:
    """In the child: solve, ask the cluster's workers for their peaks, print one JSON line."""
    from worker import solve

    began = time.perf_counter()
    result = solve(spec, roots=[Path(roots)])
    wall = time.perf_counter() - began
    stats = result.stats
    print(json.dumps({
        "wall_s": wall, "objective": result.expected.objective,
        "max_violation": result.expected.max_violation,
        "projected_objective": result.projected.objective if result.projected else None,
        "relative_gap": stats.get("relative_gap"), "lower_bound": stats.get("lower_bound"),
        "communication_rounds": stats.get("communication_rounds"),
        "rounds": stats.get("rounds"), "bytes_moved": stats.get("bytes_moved"),
        "partitions": stats.get("partitions"), "solve_s": stats.get("solve_s"),
        "iterations": stats.get("iterations"), "method": stats.get("method"),
        "worker_peak_bytes": worker_peaks(spec["solver"].get("workers")),
        "driver_peak_bytes": own_peak(),
        "mixture_weights": [m.weight for m in result.mixture],
        "deterministic": result.deterministic.solution,
        "mixture": [m.solution for m in result.mixture]}))


def run_xgboost_child(groups: str, model: str) -> None:
    """In the child: train XGBoost on the cluster, save the booster to ``model``, ask the
    workers for their peaks, print one JSON line."""
    from distributed import Client

    with Client(os.environ["LIGHTTOUCH_DASK_SCHEDULER"]) as client:
        began = time.perf_counter()
        booster = xgboost_ranking.train(client, Path(groups), DIMS)
        wall = time.perf_counter() - began
    booster.save_model(model)
    print(json.dumps({"wall_s": wall, "method": "xgboost", "rounds": xgboost_ranking.ROUNDS,
                      "worker_peak_bytes": worker_peaks(2), "driver_peak_bytes": own_peak()}))


def worker_peaks(workers: int | None) -> list[int]:
    """Each cluster worker's peak resident memory in bytes, ascending (none without a
    cluster or with ``workers`` 0)."""
    address = os.environ.get("LIGHTTOUCH_DASK_SCHEDULER")
    if not (address and workers):
        return []
    from distributed import Client

    with Client(address) as client:
        return sorted(client.run(own_peak).values())


def own_peak() -> int:
    """This process's peak resident memory in bytes since its ``exec`` (``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no VmHWM line: peaks are read on Linux only")


def measured(arguments: list[str], scheduler: str | None) -> dict:
    """One run in its own process (this script with ``arguments``): its figures and the
    driver's own peak memory."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    environment.pop("LIGHTTOUCH_DASK_SCHEDULER", None)
    # a 10x npy table is 12.5 GB, over the default cap on one reference's bytes
    environment["LIGHTTOUCH_MAX_DATA_BYTES"] = str(2**36)
    if scheduler:
        environment["LIGHTTOUCH_DASK_SCHEDULER"] = scheduler
    child = subprocess.run([sys.executable, __file__, *arguments], stdout=subprocess.PIPE,
                           env=environment, cwd=ROOT, check=False)
    if child.returncode != 0:
        raise SystemExit(f"run failed ({child.returncode})")
    return json.loads(child.stdout.decode().strip().splitlines()[-1])


def commit() -> str:
    """The commit the runs import (with ``+dirty`` for local changes outside
    ``bench/results``, which the bench writes after each run)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                            ".", ":!bench/results"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


def plan_runs(scales: list[int]) -> list[tuple[int, str, int | None]]:
    """(scale, label, solver.workers): in memory, workers 0 and 2 at 1x; 2 workers above;
    then XGBoost on the 2 workers at each scale."""
    runs = []
    for scale in scales:
        if scale == 1:
            runs += [(1, "in memory", None), (1, "partitions, this process", 0)]
        runs += [(scale, "partitions, 2 Dask workers", 2), (scale, XGBOOST_LABEL, 2)]
    return runs


def one_run(cluster, scale: int, label: str, workers: int | None, file_format: str,
            directory: Path) -> dict:
    """One planned run on fresh workers (so their peaks are the run's own), scored on the
    held-out pairs after it."""
    cluster.scale(0)
    time.sleep(2)
    cluster.scale(2)
    cluster.wait_for_workers(2)
    scheduler = cluster.scheduler_address if workers else None
    if label == XGBOOST_LABEL:
        groups = xgboost_ranking.write_groups(directory / "groups.npy", DIMS,
                                              PAPER_PAIRS, scale)
        model = directory / "xgboost.ubj"
        row = measured(["--xgboost", str(groups), str(model)], scheduler)
        return row | xgboost_ranking.xgboost_accuracy(model, DIMS)
    data = write_tables(directory, scale, file_format)
    row = measured(["--run", json.dumps(spec_for(data, workers)), str(directory)], scheduler)
    mixture = [xgboost_ranking.lattice_accuracy(solution, DIMS)["heldout_accuracy"]
               for solution in row["mixture"]]
    return row | xgboost_ranking.lattice_accuracy(row["deterministic"], DIMS) | {
        "heldout_accuracy_mixture": float(np.dot(row["mixture_weights"], mixture))}


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "bench" / "cache" / "scale_out")
    parser.add_argument("--format", default="parquet", choices=["parquet", "npy"],
                        help="the tables' format above 1x (1x is always parquet)")
    parser.add_argument("--run", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--xgboost", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        run_child(json.loads(args.run[0]), args.run[1])
        return 0
    if args.xgboost:
        run_xgboost_child(*args.xgboost)
        return 0
    from distributed import LocalCluster

    scales = [int(s) for s in args.scales.split(",")]
    path = RESULTS / "scale_out.json"
    kept = json.loads(path.read_text())["runs"] if path.exists() else []
    record = {"dims": DIMS, "iterations": ITERATIONS, "partition_rows": PARTITION_ROWS,
              "cpus": os.cpu_count(), "xgboost": xgboost_settings(),
              "runs": [run for run in kept if run["scale"] not in scales]}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster:
        for scale, label, workers in plan_runs(scales):
            # XGBoost's query groups are always an npy table
            file_format = ("npy" if label == XGBOOST_LABEL or scale > 1 and args.format == "npy"
                           else "parquet")
            load = Path("/proc/loadavg").read_text().split()[:3]
            row = one_run(cluster, scale, label, workers, file_format,
                          args.cache_dir / f"x{scale}")
            record["runs"].append({"scale": scale, "label": label, "workers": workers,
                                   "format": file_format, "commit": commit(),
                                   "loadavg_before": load} | row)
            print(json.dumps({k: v for k, v in record["runs"][-1].items()
                              if k not in ("mixture", "deterministic")}), flush=True)
            path.write_text(json.dumps(record, indent=1) + "\n")
    figure(record)
    return 0


def xgboost_settings() -> dict:
    """XGBoost's version, parameters, rounds and the held-out pairs, for the record."""
    import xgboost

    return {"version": xgboost.__version__, "parameters": xgboost_ranking.parameters(DIMS),
            "num_boost_round": xgboost_ranking.ROUNDS,
            "partition_rows": xgboost_ranking.PARTITION_ROWS,
            "heldout_pairs": xgboost_ranking.HELD_OUT_PAIRS,
            "heldout_seed": xgboost_ranking.HELD_OUT_SEED,
            "truth_heldout_accuracy": xgboost_ranking.truth_accuracy(DIMS)["heldout_accuracy"]}


def figure(record: dict) -> None:
    """Wall time, peak memory (driver and workers) and held-out pairwise accuracy per run."""
    runs = record["runs"]
    labels = [f"{r['scale']}x {r.get('format', 'parquet')}, {r['label']}" for r in runs]
    colours = ["tab:orange" if r["label"] == XGBOOST_LABEL else "tab:blue" for r in runs]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(17, 5), sharey=True)
    left.barh(labels, [r["wall_s"] for r in runs], color=colours)
    left.set_xlabel("wall (s)")
    middle.barh(labels, [r["driver_peak_bytes"] / 2**30 for r in runs], label="driver")
    middle.barh(labels, [max(r["worker_peak_bytes"], default=0) / 2**30 for r in runs],
                left=[r["driver_peak_bytes"] / 2**30 for r in runs], label="largest worker")
    middle.set_xlabel("peak resident memory (GiB)")
    middle.legend()
    scored = [(label, r["heldout_accuracy"], colour)
              for label, r, colour in zip(labels, runs, colours, strict=True)
              if "heldout_accuracy" in r]
    if scored:
        right.barh(*zip(*[(label, accuracy) for label, accuracy, _ in scored], strict=True),
                   color=[colour for _, _, colour in scored])
        truth = record["xgboost"]["truth_heldout_accuracy"]
        right.axvline(truth, color="black", linestyle=":")
        right.text(truth, 0.5, " noiseless truth", rotation=90, va="center",
                   transform=right.get_xaxis_transform())
        low = min(accuracy for _, accuracy, _ in scored)
        right.set_xlim(low - 0.02, max(truth, low) + 0.01)
    right.set_xlabel(f"held-out pairwise accuracy ({record['xgboost']['heldout_pairs']:,} "
                     "pairs)")
    fig.suptitle(f"lattice pairs D={record['dims']}: LightTouch {record['iterations']:,} "
                 f"iterations (blue), XGBoost {record['xgboost']['num_boost_round']} rounds "
                 "(orange)")
    fig.tight_layout()
    fig.savefig(RESULTS / "scale_out.png", dpi=110)


if __name__ == "__main__":
    sys.exit(main())
