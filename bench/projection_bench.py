"""Time of the exact projection Π_g at the lattice sizes of the benchmarks: the isotonic path
(recursive minimum cuts, :mod:`worker.kernels.isotonic`) next to the Clarabel QP path with its
KKT-certified polish, on the same points, in one run.

Problems: monotonicity on the 2^D lattice (D = 8, 10, 12; D = 12 is the LightTouch paper's
d = 4,096, m = 24,576) with the box [-10, 10], compiled from a ``monotone_lattice`` spec; points
``N(0, 5^2)`` per coordinate plus a monotone trend (so blocks of every size occur). For each
(D, seed): both paths' seconds, status, and the largest coordinate difference between them.

Writes bench/results/projection_bench.json and projection_bench.png. Run:
``.venv/bin/python bench/projection_bench.py``. With ``--large``, the isotonic path alone at
the lattices of ``bench/many_constraints.py`` (D = 14, 16, 17; d = 131,072 and m = 1,114,112
at D = 17), where the QP path does not finish: its seconds and whether its KKT certificate
held (status ``optimal``), written to bench/results/projection_bench_large.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from worker.problem.compile import DataSource, compile_problem
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import parse_spec

RESULTS = Path(__file__).resolve().parent / "results"
DIMS = (8, 10, 12)
LARGE_DIMS = (14, 16, 17)
SEEDS = (0, 1, 2)
BOX = 10.0


def lattice_problem(dims: int):
    """The compiled constraints and bounds of monotonicity on the 2^dims lattice."""
    spec = parse_spec({
        "spec_version": 1, "dimension": 2**dims, "bounds": {"lower": -BOX, "upper": BOX},
        "objective": {"type": "quadratic", "Q": {"format": "coo", "row": [], "col": [], "data": [],
                                                 "shape": [2**dims, 2**dims]}},
        "constraints": [{"type": "monotone_lattice", "shape": [2] * dims,
                         "increasing": list(range(dims))}],
    })
    problem = compile_problem(spec, DataSource([], data_settings()))
    return problem.constraints, problem.lower, problem.upper


def point(dims: int, seed: int) -> np.ndarray:
    """A test point (2^dims,): noise around a monotone trend (the popcount of the vertex)."""
    rng = np.random.default_rng(seed)
    vertices = np.arange(2**dims)
    popcount = np.array([bin(v).count("1") for v in vertices], dtype=np.float64)
    return rng.normal(0.0, 5.0, vertices.size) + popcount


def measure(dims: int, seed: int) -> dict:
    """Both paths on one point: seconds, statuses, and their largest disagreement."""
    constraints, lower, upper = lattice_problem(dims)
    y = point(dims, seed)
    fast = project(y, constraints, lower, upper)
    exact_qp = project(y, constraints, lower, upper, method="qp")
    return {"dims": dims, "d": 2**dims, "m": constraints.m, "seed": seed,
            "isotonic_s": fast.seconds, "isotonic_status": fast.status,
            "qp_s": exact_qp.seconds, "qp_status": exact_qp.status,
            "max_abs_difference": float(np.max(np.abs(fast.solution - exact_qp.solution))),
            "speedup": exact_qp.seconds / fast.seconds}


def measure_isotonic(dims: int, seed: int) -> dict:
    """The isotonic path alone on one point: seconds and status (``optimal``: certified)."""
    constraints, lower, upper = lattice_problem(dims)
    fast = project(point(dims, seed), constraints, lower, upper)
    return {"dims": dims, "d": 2**dims, "m": constraints.m, "seed": seed,
            "method": fast.method, "isotonic_s": fast.seconds, "isotonic_status": fast.status}


def plot(rows: list[dict], path: Path) -> None:
    """Seconds per path against d (log-log), one marker per seed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for key, label in (("isotonic_s", "isotonic (min cuts)"), ("qp_s", "Clarabel QP + polish")):
        axes.plot([r["d"] for r in rows], [r[key] for r in rows], "o", label=label)
    axes.set(xscale="log", yscale="log", xlabel="d (lattice vertices)", ylabel="seconds",
             title="Exact projection onto the monotone lattice, box [-10, 10]")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    """Warm the kernel, measure every (D, seed), write JSON and PNG, print a summary."""
    measure(4, 0)                                       # compile the numba kernel first
    if "--large" in sys.argv[1:]:
        rows = [measure_isotonic(dims, seed) for dims in LARGE_DIMS for seed in SEEDS]
        (RESULTS / "projection_bench_large.json").write_text(json.dumps(rows, indent=2))
        for row in rows:
            print(row)
        return
    rows = [measure(dims, seed) for dims in DIMS for seed in SEEDS]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "projection_bench.json").write_text(json.dumps(rows, indent=2))
    plot(rows, RESULTS / "projection_bench.png")
    for row in rows:
        print(f"D={row['dims']:2d} seed={row['seed']} isotonic {row['isotonic_s']:.4f}s "
              f"({row['isotonic_status']}) qp {row['qp_s']:.3f}s ({row['qp_status']}) "
              f"x{row['speedup']:.0f} max|diff| {row['max_abs_difference']:.1e}")


if __name__ == "__main__":
    main()
