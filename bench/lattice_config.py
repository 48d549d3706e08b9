"""The lattice benchmark's configuration: the command line, its settings, one run's plan and
what a run measured."""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from worker.algorithms.run.options import SolverOptions
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


#: The numeric options: ``--FLAG`` -> (its Settings field, what it is, the paper-size run's
#: default, the ``--quick`` run's default).
SIZED = {"pairs": ("pairs", "n pairs", lattice.PAPER_PAIRS, 20_000),
         "dims": ("dims", "D features", lattice.PAPER_DIMS, 8),
         "iterations": ("iterations", "iteration budget per run", 2_000_000, 100_000),
         "time-limit": ("time_limit_s", "safety limit (s) of runs meant to finish their "
                        "iterations", 600.0, 600.0),
         "fulltouch-time": ("fulltouch_time_s", "FullTouch time budget, s", 240.0, 30.0),
         "dense-time": ("dense_time_s", "dense non-aggregated LightTouch time budget, s",
                        150.0, 30.0),
         "psgd-time": ("psgd_time_s", "projected SGD time budget, s", 120.0, 10.0),
         "projections": ("projections", "snapshot averages projected per run", 12, 12),
         "diagnostics-time": ("diagnostics_s", "budget (s) of each fixed-minibatch "
                              "diagnostic; 0 skips", 30.0, 5.0)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, (_, what, full, small) in SIZED.items():
        parser.add_argument(f"--{flag}", type=type(full), default=None,
                            help=f"{what} (default {full:,}; with --quick {small:,})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small smoke run (D = 8)")
    parser.add_argument("--no-pipeline", action="store_true",
                        help="skip the full worker.pipeline.solve.solve run")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="problem cache (default: $TMPDIR/lighttouch-bench)")
    return parser.parse_args(argv)


def make_settings(args: argparse.Namespace) -> Settings:
    """Fill the defaults of the paper-size or the ``--quick`` run."""
    quick = args.quick
    sized = {name: value if (value := getattr(args, flag.replace("-", "_"))) is not None
             else (small if quick else full)
             for flag, (name, _, full, small) in SIZED.items()}
    pairs, dims = sized["pairs"], sized["dims"]
    cache_root = args.cache_dir or Path(tempfile.gettempdir()) / "lighttouch-bench"
    return Settings(
        **sized, seed=args.seed, psgd_iterations=1024, pipeline=not args.no_pipeline,
        prefix="lattice_quick" if quick else "lattice_bench",
        cache_dir=cache_root / f"lattice-D{dims}-n{pairs}-seed{args.seed}",
    )
