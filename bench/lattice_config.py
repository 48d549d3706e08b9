"""The lattice benchmark's configuration: the command line, its settings, one run's plan and
what a run measured."""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from worker.algorithms.options import SolverOptions
from worker.datasets import lattice


@dataclass(frozen=True)
class Settings:
    """Sizes and budgets of one benchmark invocation.

    Attributes
    ----------
    pairs, dims, seed : int
        Problem size (n pairs, D features so d = 2**D) and the seed of data and solver.
    iterations : int
        Iteration budget of every run but projected SGD.
    time_limit_s : float
        Safety time limit of the runs that should finish their iterations.
    fulltouch_time_s, dense_time_s, psgd_time_s : float
        Time budgets of FullTouch, dense LightTouch without aggregation and projected SGD.
    psgd_iterations : int
        Iteration budget of projected SGD (its time budget normally stops it first).
    projections : int
        Snapshot averages projected per run.
    diagnostics_s : float
        Time budget of each kernel diagnostic run (0 skips them).
    pipeline : bool
        Also run ``worker.pipeline.solve.solve`` once for LightTouch (lazy).
    prefix : str
        Output file prefix under ``bench/results``.
    cache_dir : pathlib.Path
        Where the generated problem is cached.
    """

    pairs: int
    dims: int
    seed: int
    iterations: int
    time_limit_s: float
    fulltouch_time_s: float
    dense_time_s: float
    psgd_time_s: float
    psgd_iterations: int
    projections: int
    diagnostics_s: float
    pipeline: bool
    prefix: str
    cache_dir: Path


@dataclass(frozen=True)
class RunPlan:
    """One solver configuration to benchmark."""

    #: Key in the JSON and plot legend.
    name: str
    #: What the configuration is, in words.
    description: str
    #: Exactly what ``run_algorithm`` receives.
    options: SolverOptions
    #: How the run is stopped ("iterations" or "time").
    budget: str


@dataclass
class RunOutcome:
    """Measurements of one run.

    Attributes
    ----------
    plan : RunPlan
    stats : dict
        The trajectory's ``stats`` (counters, solve seconds, minibatch means).
    series : dict
        Per-snapshot lists: iterations, checks, seconds, violations of average and iterate.
    projected : list of dict
        The projected snapshot averages: iteration, checks, seconds, window, objective
        before and after projection, violation, projection method, status and seconds.
    load : dict
        1-minute load average before and after the run.
    """

    plan: RunPlan
    stats: dict
    series: dict
    projected: list[dict] = field(default_factory=list)
    load: dict = field(default_factory=dict)


#: The time-budgeted runs: ``--NAME-time`` sets ``NAME_time_s``, by default the paper-size
#: or the ``--quick`` seconds.
TIME_BUDGETS = {"fulltouch": ("FullTouch", 240.0, 30.0),
                "dense": ("dense non-aggregated LightTouch", 150.0, 30.0),
                "psgd": ("projected SGD", 120.0, 10.0)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=None, help="n pairs (default 612,587)")
    parser.add_argument("--dims", type=int, default=None, help="D features (default 12)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="iteration budget per run (default 2,000,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small smoke run (D = 8)")
    parser.add_argument("--time-limit", type=float, default=600.0,
                        help="safety limit (s) of runs meant to finish their iterations")
    for name, (what, full, _) in TIME_BUDGETS.items():
        parser.add_argument(f"--{name}-time", type=float, default=None,
                            help=f"{what} time budget, s (default {full:g})")
    parser.add_argument("--projections", type=int, default=12,
                        help="snapshot averages projected per run")
    parser.add_argument("--diagnostics-time", type=float, default=None,
                        help="budget (s) of each fixed-minibatch diagnostic; 0 skips")
    parser.add_argument("--no-pipeline", action="store_true",
                        help="skip the full worker.pipeline.solve.solve run")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="problem cache (default: $TMPDIR/lighttouch-bench)")
    return parser.parse_args(argv)


def make_settings(args: argparse.Namespace) -> Settings:
    """Fill the defaults of the paper-size or the ``--quick`` run."""
    quick = args.quick

    def pick(value, full, small):
        return value if value is not None else (small if quick else full)

    pairs = pick(args.pairs, lattice.PAPER_PAIRS, 20_000)
    dims = pick(args.dims, lattice.PAPER_DIMS, 8)
    cache_root = args.cache_dir or Path(tempfile.gettempdir()) / "lighttouch-bench"
    return Settings(
        pairs=pairs, dims=dims, seed=args.seed,
        iterations=pick(args.iterations, 2_000_000, 100_000),
        time_limit_s=args.time_limit,
        **{f"{name}_time_s": pick(getattr(args, f"{name}_time"), full, small)
           for name, (_, full, small) in TIME_BUDGETS.items()},
        psgd_iterations=1024,
        projections=args.projections,
        diagnostics_s=pick(args.diagnostics_time, 30.0, 5.0),
        pipeline=not args.no_pipeline,
        prefix="lattice_quick" if quick else "lattice_bench",
        cache_dir=cache_root / f"lattice-D{dims}-n{pairs}-seed{args.seed}",
    )
