"""Equal opportunity on UCI Adult at 1x, 10x and 100x its rows: the four rate constraints of
Cotter et al. (2019) §6.2 (TPR(G) >= 95% of TPR(all) for female, male, black and white), a
linear hinge-loss model and the proxy-Lagrangian game for a fixed iteration count, on the
fit split drawn with replacement and noised (:mod:`adult_scale_data`), solved in memory,
on partitions read in the solving process (``solver.workers: 0``) and on partitions read by
the workers of a Dask ``LocalCluster`` (``solver.workers: 2``, the cluster given by
``LIGHTTOUCH_DASK_SCHEDULER``).

Each solve is ``lighttouch solve`` in its own process (:mod:`raw_pairs_cluster`'s
``run_solve``): its wall (the Result's ``stats.wall_s``, a failed run's the process's;
``process_wall_s`` adds the process's start and exit), its own peak memory (``VmHWM`` read
while it runs), and, for a cluster run, each worker's own peak after it (the workers
restarted before it). A run that fails keeps its error message in its row. From each
Result: the rounds and bytes moved and the other scalar ``stats``, the objective, and the
scores of the stochastic classifier (expected over the mixture's weights;
:func:`adult_tuning.evaluate`): error and each group's TPR / TPR(all) (percent) on the K x
training rows (exact, from their distinct rows counted), on the held-out validation split
and on the official test file. Every solve parses its files (the parsed-data cache is off:
``LIGHTTOUCH_DATA_CACHE_BYTES=0``). At 1x the same spec is also solved on the fit split as
is (no draws, no noise), the protocol of bench/adult_fairness.py at the solver's default
step sizes. At the ``--fairlearn`` scales, after these, fairlearn's ExponentiatedGradient fits
the same K x rows in its own process, scored alike (:mod:`adult_scale_fairlearn`).

Usage::

    PYTHONPATH=. .venv/bin/python bench/adult_scale.py --scales 1 10 100 \
        [--iterations 5000] [--workers 0 2] [--in-memory 1 10 100] [--skip-generate] \
        [--fairlearn 1 10] [--fairlearn-timeout 3600]

Writes ``bench/results/adult_scale.json`` after each run (the generation's seconds and
bytes per scale, the machine's load and the commit with each run; rows of scales not run
are kept) and ``adult_scale.png``, and fairlearn's the same way in
``adult_scale_fairlearn.json`` and ``.png`` (beside LightTouch's runs at its scales;
``--scales`` with no scale runs fairlearn's alone). Data are written once under ``--cache-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import matplotlib
import numpy as np
from adult_fairness import format_table
from adult_scale_data import Source, generate, template_spec, training_rows
from adult_scale_fairlearn import LABEL, run_scales
from adult_tuning import ITERATIONS, evaluate
from raw_pairs_cluster import run_solve, worker_peaks
from scale_out import commit

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
FIT_LABEL = "fit split as is, in memory"


def plan_runs(scales: list[int], workers: list[int], in_memory: list[int]
              ) -> list[tuple[int, str, int | None]]:
    """(scale, label, solver.workers) of every run: at 1x the fit split as is, then per
    scale in memory (at the ``in_memory`` scales) and on partitions for each ``workers``."""
    runs = [(1, FIT_LABEL, None)] if 1 in scales else []
    for scale in scales:
        if scale in in_memory:
            runs.append((scale, "in memory", None))
        runs += [(scale, "partitions, this process" if count == 0 else
                  f"partitions, {count} Dask workers", count) for count in workers]
    return runs


def run_spec(directory: Path, iterations: int, seed: int, workers: int | None) -> dict:
    """The spec written in ``directory`` with this run's iterations, seed and workers."""
    spec = json.loads((directory / "spec.json").read_text())
    spec["solver"].update(iterations=iterations, seed=seed)
    if workers is not None:
        spec["solver"]["workers"] = workers
    return spec


def scored(result: dict, splits: dict) -> dict:
    """The mixture's support and its scores on each of ``splits`` (name -> Split)."""
    solutions = np.array([member["solution"] for member in result["mixture"]])
    weights = np.array([member["weight"] for member in result["mixture"]])
    return {"support": int(np.count_nonzero(weights)), "mixture_weights": weights.tolist(),
            **{name: evaluate(split, solutions, weights) for name, split in splits.items()}}


def one_run(directory: Path, spec: dict, name: str, client, splits: dict) -> dict:
    """One solve in its own process (on the freshly restarted workers of ``client``'s
    cluster, when given) and its figures (module notes)."""
    environment = {}
    if client is not None:
        client.restart()
        environment["LIGHTTOUCH_DASK_SCHEDULER"] = client.scheduler.address
    began = time.perf_counter()
    row = run_solve(directory, spec, name, environment)
    row["process_wall_s"] = time.perf_counter() - began
    if client is not None:
        row["worker_peak_bytes"] = worker_peaks(client)
    if "error" in row:
        return row
    result = json.loads((directory / f"result_{name}.json").read_text())
    row["stats"] = {key: value for key, value in sorted(result["stats"].items())
                    if key not in row and not isinstance(value, list | dict)}
    return row | scored(result, splits)


def run_all(args, source: Source, record: dict, client) -> None:
    """Every planned run, the record written after each."""
    held_out = {"validation": source.validation, "test": source.test}
    training, training_scale = None, None
    for scale, label, workers in plan_runs(args.scales, args.workers, args.in_memory):
        if label == FIT_LABEL:
            directory, splits = args.cache_dir / "fit", {"train": source.fit, **held_out}
        else:
            directory = args.cache_dir / f"x{scale}"
            if training_scale != scale:
                training, training_scale = training_rows(args.cache_dir, scale), scale
            splits = {"train": training, **held_out}
        spec = run_spec(directory, args.iterations, args.seed, workers)
        load = os.getloadavg()
        name = f"{label.replace(', ', '_').replace(' ', '_')}_x{scale}"
        row = {"scale": scale, "label": label, "workers": workers, "commit": commit(),
               "loadavg_before": load} | one_run(directory, spec, name,
                                                 client if workers else None, splits)
        record["runs"].append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "stats"})[:2000], flush=True)
        (RESULTS / "adult_scale.json").write_text(json.dumps(record, indent=1) + "\n")


def summary(runs: list[dict]) -> str:
    """Support, test error and ratios | training ratios of each run that answered."""
    rows = [{"model": f"{r['scale']}x {r['label']}"[:30], **r} for r in runs if "test" in r]
    return format_table(rows)


def figure(runs: list[dict], title: str, path: Path) -> None:
    """Wall time, peak memory (driver and largest worker), test error and smallest test
    TPR ratio per run (a failed run has no scores)."""
    labels = [f"{r['scale']}x, {r['label']}" + ("" if "test" in r else " (failed)")
              for r in runs]
    fig, axes = plt.subplots(1, 4, figsize=(19, 1.5 + 0.45 * len(runs)), sharey=True)
    axes[0].barh(labels, [r["wall_s"] for r in runs])
    axes[0].set_xlabel("wall (s)")
    driver = [r["driver_peak_bytes"] / 2**30 for r in runs]
    axes[1].barh(labels, driver, label="driver")
    axes[1].barh(labels, [max(r.get("worker_peak_bytes", []), default=0) / 2**30
                          for r in runs], left=driver, label="largest worker")
    axes[1].set_xlabel("peak resident memory (GiB)")
    axes[1].legend()
    axes[2].barh(labels, [r["test"]["error"] if "test" in r else np.nan for r in runs])
    axes[2].set_xlabel("test error (%)")
    axes[3].barh(labels, [min(v for k, v in r["test"].items() if k != "error")
                          if "test" in r else np.nan for r in runs])
    axes[3].axvline(95, color="black", linestyle=":")
    axes[3].set_xlim(80, 105)
    axes[3].set_xlabel("smallest test TPR(G) / TPR(all) (%)")
    fig.suptitle(f"UCI Adult x K, four equal-opportunity constraints, {title}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="*", default=[1, 10, 100])
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--seed", type=int, default=0, help="the solver's seed")
    parser.add_argument("--data-seed", type=int, default=0, help="the draws' and noise's seed")
    parser.add_argument("--workers", type=int, nargs="*", default=[0, 2],
                        help="solver.workers of the partitioned runs (0: this process)")
    parser.add_argument("--in-memory", type=int, nargs="*", default=None,
                        help="scales also solved in memory (default: every scale)")
    parser.add_argument("--skip-generate", action="store_true",
                        help="write no data: every scale must be in the cache already")
    parser.add_argument("--cache-dir", type=Path,
                        default=ROOT / "bench" / "cache" / "adult_scale")
    parser.add_argument("--fairlearn", type=int, nargs="*", default=[1, 10],
                        help="scales fairlearn's ExponentiatedGradient also fits")
    parser.add_argument("--fairlearn-timeout", type=float, default=3600,
                        help="seconds before a fairlearn fit is ended")
    args = parser.parse_args(argv)
    args.in_memory = args.scales if args.in_memory is None else args.in_memory
    return args


def main(argv: list[str] | None = None) -> None:
    """Generate (or find) each scale's files, then run and record every planned solve."""
    args = arguments(argv)
    # every solve parses its files, as a first solve does, on the driver and the workers alike
    os.environ["LIGHTTOUCH_DATA_CACHE_BYTES"] = "0"
    source = Source()
    template = template_spec(source, args.cache_dir, args.iterations, args.seed)
    path = RESULTS / "adult_scale.json"
    kept = json.loads(path.read_text()) if path.exists() else {"generation": {}, "runs": []}
    record = {"iterations": args.iterations, "seed": args.seed, "cpus": os.cpu_count(),
              "file_rows": source.file_rows, "fit_rows": len(source.raw),
              "generation": kept["generation"],
              "runs": [run for run in kept["runs"] if run["scale"] not in args.scales]}
    for scale in sorted({*args.scales, *args.fairlearn}):
        if args.skip_generate and not (args.cache_dir / f"x{scale}/generation.json").exists():
            raise SystemExit(f"--skip-generate: no x{scale} data under {args.cache_dir}")
        record["generation"][str(scale)] = generate(source, args.cache_dir, scale, template,
                                                    args.data_seed)
        print(json.dumps(record["generation"][str(scale)]), flush=True)
    if any(args.workers) and args.scales:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=max(args.workers), threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            run_all(args, source, record, client)
    else:
        run_all(args, source, record, None)
    print(summary(record["runs"]))
    figure(record["runs"], f"proxy-Lagrangian {record['iterations']:,} iterations",
           RESULTS / "adult_scale.png")
    if args.fairlearn:
        fairlearn = run_scales(args.fairlearn, args.cache_dir, lambda scale: {
            "train": training_rows(args.cache_dir, scale), "validation": source.validation,
            "test": source.test}, args.fairlearn_timeout, RESULTS / "adult_scale_fairlearn.json")
        print(summary(fairlearn["runs"]))
        beside = [run for run in record["runs"] if run["scale"] in args.fairlearn]
        figure(beside + fairlearn["runs"], f"LightTouch beside {LABEL}",
               RESULTS / "adult_scale_fairlearn.png")


if __name__ == "__main__":
    main()
