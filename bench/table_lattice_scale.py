"""The paper's lattice problem from raw pairs, solved with the defaults at 1x and 10x the
pairs: memory against the default budget, feature-compile share, and the certified gap.

For each ``--scales`` factor k, k x 612,587 pairs are drawn as :mod:`bench.table_lattice`
draws them and written as two parquet tables; the spec is a ``calibrated_lattice`` (12
inputs of size 2, keypoints [0, 1], all increasing) with a ``pairwise_hinge`` loss, the
paper's box and no ``solver`` block at all (every default: ``iterations: "auto"``, the
polish, the certified lower bound). Three stages run, each in a fresh process so that each
one's peak resident memory is its own:

``validate``
    :func:`worker.pipeline.validate.summarize_spec` under the default per-job budget
    (:func:`worker.settings.default_max_job_bytes`): the memory estimate the service checks.
``lower``
    reading the tables and computing the features (:func:`worker.tables.lower.lower_tables`)
    alone, timed.
``solve``
    :func:`worker.solve` under the same budget: the job as a work horse runs it.

Usage::

    python -m bench.table_lattice_scale                  # 1x and 10x (about 30 minutes)
    python -m bench.table_lattice_scale --scales 1       # paper size only

Writes ``bench/results/table_lattice_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa

from bench.table_lattice import NAMES, write_pairs
from worker import solve
from worker.datasets.lattice import BOX_BOUND, PAPER_PAIRS
from worker.errors import SpecError
from worker.pipeline.memory import declared_parts
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource
from worker.settings import data_settings, default_max_job_bytes
from worker.spec.models import parse_spec
from worker.tables.columns import Table
from worker.tables.lower import fit_model, lower_tables

RESULTS = Path(__file__).resolve().parent / "results" / "table_lattice_scale.json"
#: The Result ``stats`` a scale run keeps.
KEPT_STATS = ("iterations", "load_s", "solve_s", "wall_s", "polish_status", "polish_s",
              "lower_bound", "lower_bound_status", "lower_bound_examples", "lower_bound_s",
              "gap", "relative_gap", "data_load_s", "data_bytes")


def defaults_spec(tables: dict) -> dict:
    """The calibrated lattice on the raw tables, with no solver settings."""
    return {
        "spec_version": 1, "name": "paper lattice from raw pairs, defaults",
        "bounds": {"lower": -BOX_BOUND, "upper": BOX_BOUND},
        "model": {"type": "calibrated_lattice", "features": [
            {"column": name, "keypoints": [0, 1], "monotonic": "increasing"}
            for name in NAMES]},
        "objective": {"type": "empirical_risk", "loss": "pairwise_hinge", "l2": 0,
                      "data": tables},
    }


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def stage_validate(spec: dict, directory: Path) -> dict:
    """The declared (spec-only) and compiled memory estimates under the default budget."""
    budget = default_max_job_bytes()
    report = {"budget_bytes": budget,
              "declared_bytes": sum(declared_parts(parse_spec(spec)).values())}
    try:
        summary = summarize_spec(spec, [directory], max_job_bytes=budget)
    except SpecError as error:
        report["refused"] = str(error)
    else:
        report.update(estimate_bytes=summary["memory_estimate_bytes"], sizes=summary["sizes"],
                      algorithm=summary["algorithm"])
    return report


def stage_lower(spec: dict, directory: Path) -> dict:
    """Seconds to read the tables and compute the features, the kernels loaded first."""
    model = parse_spec(spec)
    warm = [Table.of(pa.table(dict.fromkeys(NAMES, [0.5])), "t")]
    fit_model(model, warm).features(warm[0])
    started = time.perf_counter()
    lower_tables(model, DataSource([directory], settings=data_settings()))
    return {"lowering_s": time.perf_counter() - started}


class MemorySampler(threading.Thread):
    """Samples this process's resident memory every ``interval`` seconds until stopped:
    where in the job the peak falls."""

    def __init__(self, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.interval, self.samples = interval, []
        self.started, self.done = time.perf_counter(), threading.Event()

    def run(self) -> None:
        """Sample until :attr:`done` is set."""
        page = os.sysconf("SC_PAGE_SIZE")
        while not self.done.wait(self.interval):
            resident = int(Path("/proc/self/statm").read_text().split()[1]) * page
            self.samples.append((round(time.perf_counter() - self.started, 1), resident))


def stage_solve(spec: dict, directory: Path) -> dict:
    """The job under the default budget: its stats, the answer's figures and the resident
    memory over time (seconds from the start of the job, bytes)."""
    sampler = MemorySampler()
    sampler.start()
    try:
        result = solve(spec, roots=[directory], max_job_bytes=default_max_job_bytes())
    except SpecError as error:
        return {"refused": str(error)}
    finally:
        sampler.done.set()
    point = result.projected if result.projected is not None else result.mean
    peak = max(sampler.samples, key=lambda sample: sample[1], default=(None, 0))
    return {"objective": point.objective, "max_violation": point.max_violation,
            **{key: result.stats[key] for key in KEPT_STATS if key in result.stats},
            "sampled_peak_s": peak[0], "rss_samples": sampler.samples}


STAGES = {"validate": stage_validate, "lower": stage_lower, "solve": stage_solve}


def run_stage(stage: str, directory: Path) -> dict:
    """Run one stage in a fresh interpreter; its figures and its own peak RSS."""
    output = directory / f"{stage}.json"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bench.table_lattice_scale", "--stage", stage,
                           "--directory", str(directory)], cwd=Path(__file__).parents[1],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"failed": done.returncode, "stderr": done.stderr[-2000:],
                "process_s": time.perf_counter() - started}
    return {**json.loads(output.read_text()), "process_s": time.perf_counter() - started}


def run_scale(scale: int) -> dict:
    """Write scale x the paper's pairs and run the three stages on them."""
    report: dict = {"pairs": scale * PAPER_PAIRS}
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        tables = write_pairs(directory, scale * PAPER_PAIRS, scale, hand_built=False)[0]
        (directory / "spec.json").write_text(json.dumps(defaults_spec(tables)))
        for stage in STAGES:
            report[stage] = run_stage(stage, directory)
            print(stage, json.dumps(report[stage]), flush=True)
    solved = report["solve"]
    if "solve_s" in solved and "lowering_s" in report["lower"]:
        report["lowering_over_solve"] = report["lower"]["lowering_s"] / solved["solve_s"]
        report["lowering_over_wall"] = report["lower"]["lowering_s"] / solved["wall_s"]
    if "peak_rss_bytes" in solved:
        report["peak_rss_over_budget"] = solved["peak_rss_bytes"] / default_max_job_bytes()
    report["load_average_1min"] = os.getloadavg()[0]
    return report


def main(argv: list[str] | None = None) -> None:
    """Command line: the scales (parent), or one stage in a child process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--stage", choices=sorted(STAGES), help=argparse.SUPPRESS)
    parser.add_argument("--directory", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stage is not None:
        spec = json.loads((args.directory / "spec.json").read_text())
        figures = STAGES[args.stage](spec, args.directory)
        figures["peak_rss_bytes"] = peak_rss_bytes()
        (args.directory / f"{args.stage}.json").write_text(json.dumps(figures))
        return
    report = {"cpus": os.cpu_count(), "budget_bytes": default_max_job_bytes(), "scales": {}}
    for scale in args.scales:
        report["scales"][str(scale)] = run_scale(scale)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
