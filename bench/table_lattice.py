"""The LightTouch paper's §6 problem from raw pairs: compile time against solve time, and the
same optimum as the hand-built spec.

The pairs (12 columns in [0, 1]) are drawn as :mod:`worker.datasets.lattice` draws them and
written twice: as two parquet tables of raw columns (``positive``, ``negative``) for a
``calibrated_lattice`` spec (12 inputs of size 2, keypoints [0, 1], all increasing), and as
the two simplex-interpolated npz matrices of today's hand-built spec
(:func:`worker.datasets.lattice.problem_spec`). Both specs are compiled and their problems
compared array by array (``same_problem``), then solved in this process with the same solver
block, without the polishing and lower-bound LPs (``solver.polish``, ``output.lower_bound``
off), whose time limit would make the two runs differ on a loaded machine: the same problem
and seed then give the same solution (``same_solution``). ``lowering_s`` is reading the
tables and computing the features (:func:`worker.tables.lower.lower_tables`),
``features_s`` the features alone (from the raw columns in memory), ``hand_built_load_s``
reading the npz files. At ``--scale`` times the pairs only the lowering is timed.

Usage::

    python bench/table_lattice.py                       # paper size, and 10x lowering
    python bench/table_lattice.py --pairs 50000 --scale 2 --iterations 20000   # quick

Writes ``bench/results/table_lattice.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from worker import solve
from worker.datasets.lattice import (
    DEFAULT_ALGORITHM,
    DEFAULT_ITERATIONS,
    PAPER_DIMS,
    PAPER_PAIRS,
    make_truth,
    problem_spec,
    sample_pairs,
)
from worker.datasets.simplex import simplex_interpolation
from worker.problem.compile import DataSource, compile_problem
from worker.settings import data_settings
from worker.spec.models import parse_spec
from worker.tables.columns import Table
from worker.tables.lower import fit_model, lower_tables

RESULTS = Path(__file__).resolve().parent / "results" / "table_lattice.json"
NAMES = [f"f{j}" for j in range(PAPER_DIMS)]


def write_pairs(directory: Path, pairs: int, seed: int, hand_built: bool = True,
                group_rows: int | None = None) -> tuple[dict, np.ndarray, np.ndarray]:
    """Write the raw tables (row groups of ``group_rows`` rows; None: pyarrow's default) and
    (``hand_built``) the hand-built npz files of ``pairs`` pairs; return the tables'
    references and the raw pairs x+ and x- (each (pairs, 12))."""
    positive, negative = sample_pairs(pairs, make_truth(PAPER_DIMS, 0), 0.05,
                                      np.random.default_rng(seed))
    tables = {}
    for side, x in (("positive", positive), ("negative", negative)):
        pq.write_table(pa.table(dict(zip(NAMES, x.T, strict=True))), directory / f"{side}.parquet",
                       row_group_size=group_rows)
        tables[side] = {"uri": (directory / f"{side}.parquet").as_uri()}
    if not hand_built:
        return tables, positive, negative
    sp.save_npz(directory / "positive.npz", simplex_interpolation(positive), compressed=False)
    sp.save_npz(directory / "negative.npz", simplex_interpolation(negative), compressed=False)
    return tables, positive, negative


def specs(directory: Path, tables: dict, iterations: int) -> tuple[dict, dict]:
    """(the calibrated lattice spec on raw tables, the paper's hand-built spec)."""
    hand = problem_spec(directory / "positive.npz", directory / "negative.npz", PAPER_DIMS,
                        seed=0, iterations=iterations, algorithm=DEFAULT_ALGORITHM,
                        name="paper lattice")
    raw = {key: value for key, value in hand.items() if key != "dimension"}
    raw["model"] = {"type": "calibrated_lattice", "features": [
        {"column": name, "keypoints": [0, 1], "monotonic": "increasing"} for name in NAMES]}
    raw["constraints"] = []
    raw["objective"] = {**hand["objective"], "data": tables}
    for spec in (raw, hand):
        spec["solver"]["polish"] = False
        spec["output"] = {"lower_bound": False}
    return raw, hand


def lowering_seconds(spec: dict, directory: Path, raw: tuple) -> dict:
    """Seconds to lower the spec (read the tables, features), and the features alone."""
    model = parse_spec(spec)
    warm = [Table.of(pa.table(dict.fromkeys(NAMES, [0.5])), "t")]
    fit_model(model, warm).features(warm[0])           # load the compiled kernels first
    started = time.perf_counter()
    lower_tables(model, DataSource([directory], data_settings()))
    lowering = time.perf_counter() - started
    tables = [Table.of(pa.table(dict(zip(NAMES, x.T, strict=True))), "t") for x in raw]
    started = time.perf_counter()
    fitted = fit_model(model, tables)
    for table in tables:
        fitted.features(table)
    return {"lowering_s": lowering, "features_s": time.perf_counter() - started}


def same_problem(raw_spec: dict, hand_spec: dict, directory: Path) -> tuple[bool, float]:
    """Whether both specs compile to equal arrays; seconds to compile the hand-built one."""
    lowered = lower_tables(parse_spec(raw_spec), DataSource([directory], data_settings()))
    ours = compile_problem(lowered.spec, lowered.source)
    started = time.perf_counter()
    theirs = compile_problem(parse_spec(hand_spec), DataSource([directory], data_settings()))
    seconds = time.perf_counter() - started
    pairs = [(ours.objective.features, theirs.objective.features),
             (ours.constraints.matrix, theirs.constraints.matrix)]
    same = all(a.shape == b.shape and (a != b).nnz == 0 for a, b in pairs) and all(
        np.array_equal(a, b) for a, b in [(ours.objective.labels, theirs.objective.labels),
                                          (ours.constraints.rhs, theirs.constraints.rhs),
                                          (ours.lower, theirs.lower),
                                          (ours.upper, theirs.upper)])
    return same, seconds


def solved(spec: dict, directory: Path) -> dict:
    """The figures of one solve."""
    result = solve(spec, roots=[directory])
    point = result.projected if result.projected is not None else result.mean
    return {"objective": point.objective, "max_violation": point.max_violation,
            "solution": point.solution, "load_s": result.stats["load_s"],
            "solve_s": result.stats["solve_s"], "wall_s": result.stats["wall_s"]}


def run(pairs: int, scale: int, iterations: int) -> dict:
    """Both solves at ``pairs`` pairs and the lowering at ``scale`` times as many."""
    report: dict = {"pairs": pairs, "dims": PAPER_DIMS, "iterations": iterations}
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        tables, *raw = write_pairs(directory, pairs, 0)
        raw_spec, hand_spec = specs(directory, tables, iterations)
        report.update(lowering_seconds(raw_spec, directory, raw))
        report["same_problem"], report["hand_built_load_s"] = same_problem(
            raw_spec, hand_spec, directory)
        ours, theirs = solved(raw_spec, directory), solved(hand_spec, directory)
    report["raw_tables"] = {k: v for k, v in ours.items() if k != "solution"}
    report["hand_built"] = {k: v for k, v in theirs.items() if k != "solution"}
    report["same_solution"] = bool(np.array_equal(ours["solution"], theirs["solution"]))
    report["lowering_over_solve"] = report["lowering_s"] / ours["solve_s"]
    report["lowering_over_wall"] = report["lowering_s"] / ours["wall_s"]
    if scale > 1:
        with tempfile.TemporaryDirectory() as name:
            directory = Path(name)
            tables, *raw = write_pairs(directory, pairs * scale, 1)
            raw_spec, _ = specs(directory, tables, iterations)
            report["scaled"] = {"pairs": pairs * scale,
                                **lowering_seconds(raw_spec, directory, raw)}
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report["load_average_1min"] = os.getloadavg()[0]
    return report


def main(argv: list[str] | None = None) -> None:
    """Command line: run and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=PAPER_PAIRS)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    report = run(args.pairs, args.scale, args.iterations)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
