"""The ``lighttouch`` command: ``solve``, ``validate`` and ``predict`` run in this process,
no Redis.

Exit codes: 0 success, 1 the spec or its data are unusable (message on stderr), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from worker.algorithms.loop import Progress as SolverProgress
from worker.errors import LightTouchError, SpecError
from worker.pipeline.validate import summarize_spec

_console = Console(stderr=True)


def _read_spec(path: str) -> Any:
    """Decode the spec file; unreadable or non-JSON files are spec errors naming the file."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SpecError.at("", f"cannot read {path}: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SpecError.at("", f"{path} is not JSON: {error.msg} at line {error.lineno} "
                           f"column {error.colno}") from None


def _solve(args: argparse.Namespace) -> int:
    from worker.pipeline.solve import solve

    spec = _read_spec(args.spec)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(),
               MofNCompleteColumn(),
               TextColumn("f={task.fields[objective]:.6g}"),
               TextColumn("viol={task.fields[violation]:.2e}"),
               TextColumn("checks={task.fields[checks]:,}"), TimeElapsedColumn())
    with Progress(*columns, console=_console, disable=args.quiet) as bar:
        task = bar.add_task("solving", total=None, objective=float("nan"),
                            violation=float("nan"), checks=0)

        def report(progress: SolverProgress) -> None:
            bar.update(task, completed=progress.iteration, total=progress.iterations,
                       objective=progress.objective, violation=progress.max_violation,
                       checks=progress.constraint_checks)

        result = solve(spec, progress=report)
    text = result.model_dump_json(indent=None if args.output else 2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        _console.print(f"{result.algorithm}: objective {result.expected.objective:.6g}, "
                       f"max violation {result.expected.max_violation:.3g}, "
                       f"{len(result.mixture)} member(s); result written to {args.output}")
    else:
        sys.stdout.write(text + "\n")
    return 0


def _validate(args: argparse.Namespace) -> int:
    summary = summarize_spec(_read_spec(args.spec))
    sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    return 0


def _predict(args: argparse.Namespace) -> int:
    from worker.data.read import read_matrix
    from worker.data.refs import DataRef
    from worker.mixture import Mixture

    mixture = Mixture.from_result(_read_spec(args.result))
    examples = Path(args.examples).resolve()
    features = read_matrix(DataRef.model_validate({"uri": examples.as_uri()}), args.examples,
                           roots=[examples.parent])
    scores = mixture.score(features, args.mode, args.seed)
    text = json.dumps({"mode": args.mode, "seed": args.seed, "scores": scores.tolist(),
                       "positive": (scores > 0).tolist()})
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``serve``, ``worker`` and ``submit`` join with the service)."""
    parser = argparse.ArgumentParser(prog="lighttouch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser("solve", help="solve a spec in this process")
    solve.add_argument("spec", help="problem spec JSON file ('-' for stdin)")
    solve.add_argument("-o", "--output", help="write the Result JSON here (default: stdout)")
    solve.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    solve.set_defaults(run=_solve)
    validate = commands.add_parser("validate", help="check a spec and print its sizes")
    validate.add_argument("spec", help="problem spec JSON file ('-' for stdin)")
    validate.set_defaults(run=_validate)
    predict = commands.add_parser("predict", help="score examples with a result's mixture")
    predict.add_argument("result", help="Result JSON written by solve -o")
    predict.add_argument("examples", help="feature matrix file (npy, npz, csv, svmlight, mtx)")
    predict.add_argument("--mode", choices=("stochastic", "expected", "deterministic"),
                         default="stochastic", help="per-example random member (default), "
                         "weighted mean score, or the member of largest weight")
    predict.add_argument("--seed", type=int, default=0, help="seed of the stochastic draws")
    predict.add_argument("-o", "--output", help="write the scores JSON here (default: stdout)")
    predict.set_defaults(run=_predict)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lighttouch`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except LightTouchError as error:
        _console.print(f"error: {error}", style="red", markup=False, highlight=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
