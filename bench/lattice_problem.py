"""Write a lattice ranking problem in the shape of the LightTouch paper's experiment
(:mod:`worker.datasets.lattice`) to a directory and print its spec's path.

Usage::

    python bench/lattice_problem.py OUTDIR --pairs 612587 --dims 12 --seed 0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from worker.datasets.lattice import (
    DEFAULT_ALGORITHM,
    DEFAULT_ITERATIONS,
    DEFAULT_NOISE,
    PAPER_DIMS,
    PAPER_PAIRS,
    write_problem,
)


def main(argv: list[str] | None = None) -> int:
    """Command line: write a problem and print its spec path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="output directory")
    parser.add_argument("--pairs", type=int, default=PAPER_PAIRS)
    parser.add_argument("--dims", type=int, default=PAPER_DIMS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=DEFAULT_NOISE)
    parser.add_argument("--truth-seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--algorithm", default=DEFAULT_ALGORITHM)
    parser.add_argument("--compressed", action="store_true", help="deflate the npz files")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    spec_path = write_problem(
        args.outdir,
        args.pairs,
        args.dims,
        args.seed,
        args.iterations,
        args.algorithm,
        args.noise,
        args.truth_seed,
        args.compressed,
    )
    print(spec_path)
    print(f"generated in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
