"""The ``lighttouch`` command: one parser, one progress bar.

``solve``, ``validate``, ``predict`` and ``report`` run in this process, no Redis
(:mod:`worker.commands`); ``serve``, ``worker`` and ``submit`` need Redis or an API.
Configuration is the ``LIGHTTOUCH_*`` environment (:mod:`worker.settings`), checked before
each command does anything. Each command imports what it needs when it runs, so ``solve``
does not load the web stack. Every mistake a user can make ends in one message on stderr
and an exit code, never a traceback.

Exit codes: 0 success, 1 the spec, its data or the service refused (message on stderr),
2 usage, 3 ``report``: a constraint fails beyond the tolerance on the data.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from service.progress import progress_bar, summary_text
from service.settings import client_settings, load_service_settings
from worker.errors import ConfigError, LightTouchError
from worker.settings import load_settings

#: Messages and the progress bar; a message is one paragraph, whatever the width (a pipe or
#: a file gets it unwrapped).
_console = Console(stderr=True, soft_wrap=True)

#: ``lighttouch --help``'s description (plain text: argparse prints it as it is).
DESCRIPTION = """Constrained stochastic optimization in this process (solve, validate,
predict, report: no Redis) or as a service (serve, worker, submit). Exit codes: 0 success,
1 the input or the service refused (message on stderr), 2 usage, 3 report: a constraint
fails beyond the tolerance on the data."""


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    load_service_settings()   # fail here, naming the variable, not in every uvicorn process
    host = "localhost" if args.host in ("0.0.0.0", "::") else args.host
    _console.print(f"dashboard: http://{host}:{args.port}/ui/ (API docs: /docs)", highlight=False,
                   soft_wrap=True)
    uvicorn.run("service.app:create_app", factory=True, host=args.host, port=args.port,
                workers=args.workers, timeout_graceful_shutdown=5, log_level="info")
    return 0


def _worker(args: argparse.Namespace) -> int:
    settings = load_service_settings()
    from redis.exceptions import ConnectionError as RedisUnreachable

    from worker.queue.connection import worker_connection
    from worker.queue.workers import run_worker
    try:
        run_worker(worker_connection(settings.redis_url), heartbeat_s=settings.heartbeat_s,
                   burst=args.burst)
    except RedisUnreachable as error:
        raise ConfigError(f"cannot reach Redis at LIGHTTOUCH_REDIS_URL: {error} Start it, or "
                          "point LIGHTTOUCH_REDIS_URL at it") from None
    return 0


def _submit(args: argparse.Namespace) -> int:
    from service import client
    from worker.result import Summary

    url, api_key = _service_address(args)
    spec = sys.stdin.buffer.read() if args.spec == "-" else Path(args.spec).read_bytes()
    with client.connect(url, api_key) as http, client.reporting_unreachable(url):
        answer = client.submit(http, spec)
        _console.print(f"job {answer['id']} queued", highlight=False)
        if not (args.follow or args.output):
            sys.stdout.write(json.dumps(answer) + "\n")
            return 0
        with progress_bar(args.quiet, _console) as bar:
            final = client.follow(http, answer["id"], bar.event)
        if final["status"] != "succeeded":
            _console.print(f"job {final['id']} {final['status']}: {final.get('error') or ''}",
                           style="red", markup=False, highlight=False)
            return 1
        result = client.job_call(answer["id"], part="/result").send(http).content
    if args.output:
        Path(args.output).write_bytes(result + b"\n")
        summary = Summary.model_validate(final["summary"])
        _console.print(f"{summary_text(final['algorithm'], summary)}; result written to "
                       f"{args.output}", highlight=False)
    else:
        sys.stdout.buffer.write(result + b"\n")
    return 0


def _service_address(args: argparse.Namespace) -> tuple[str, str | None]:
    """The API's URL and key: the flags, else ``LIGHTTOUCH_URL`` and ``LIGHTTOUCH_API_KEY``."""
    defaults = client_settings()
    url = args.url if args.url is not None else defaults.url
    if args.api_key is not None or defaults.api_key is None:
        return url, args.api_key
    return url, defaults.api_key.get_secret_value()


def _solve(args: argparse.Namespace) -> int:
    from worker.commands import parse_spec_file, solve_spec
    load_settings()

    spec = parse_spec_file(args.spec)      # refused before the progress bar is drawn
    with progress_bar(args.quiet, _console) as bar:
        result = solve_spec(spec, lambda p: bar.report(
            p.iteration, p.iterations, p.objective, p.max_violation, p.constraint_checks))
        bar.finish(result.summary())
    text = result.model_dump_json(indent=None if args.output else 2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        _console.print(f"{summary_text(result.algorithm, result.summary())}; result written "
                       f"to {args.output}", highlight=False)
    else:
        sys.stdout.write(text + "\n")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from worker.commands import validate_file
    load_settings()

    sys.stdout.write(json.dumps(validate_file(args.spec), indent=2) + "\n")
    return 0


def _predict(args: argparse.Namespace) -> int:
    from worker.commands import predict_file
    load_settings()

    text = json.dumps(predict_file(args.result, args.examples, args.mode, args.seed,
                                   args.format))
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
    return 0


#: ``lighttouch report``'s exit code when a constraint fails beyond the tolerance.
CONSTRAINT_FAILED = 3


def _report(args: argparse.Namespace) -> int:
    from worker.commands import ReportData, report_file
    from worker.report.text import failures, report_table
    load_settings()

    data = ReportData(args.data, args.format, args.labels, args.label_column,
                      tuple(args.positive_label), tuple(args.groups), tuple(args.group))
    report = report_file(args.result, data, args.tolerance)
    assert report.validation is not None
    if args.model not in report.validation.models:
        _console.print(f"error: the result has no {args.model} model to check",
                       style="red", markup=False, highlight=False)
        return 1
    failed = failures(report.validation, args.model)
    if args.json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(report_table(report.validation, args.data) + "\n")
    if failed:
        _console.print(f"{args.model}: {', '.join(failed)} violated beyond tolerance "
                       f"{report.tolerance:g} on {args.data}", style="red", markup=False,
                       highlight=False)
        return CONSTRAINT_FAILED
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Every ``lighttouch`` subcommand."""
    parser = argparse.ArgumentParser(prog="lighttouch", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)
    _engine_commands(commands)
    _service_commands(commands)
    return parser


def _engine_commands(commands) -> None:
    """``solve``, ``validate`` and ``predict``: in this process, no Redis."""
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
    predict.add_argument("examples", help="feature matrix file (npy, npz, csv, svmlight, mtx), or "
                         "the raw table (csv, parquet, feather) of a calibrated model")
    predict.add_argument("--mode", choices=("stochastic", "expected", "deterministic"),
                         default="stochastic", help="stochastic (default): each example "
                         "scored by a member drawn with probability its weight, the "
                         "randomized classifier the constraint guarantees are about; "
                         "expected: the weighted mean score, another classifier with no "
                         "guarantee; deterministic: the result's deterministic model (the "
                         "best single candidate: least objective within the tolerance), "
                         "whose constraints the result's report gives")
    predict.add_argument("--seed", type=int, default=0, help="seed of the stochastic draws")
    _format_option(predict)
    predict.add_argument("-o", "--output", help="write the scores JSON here (default: stdout)")
    predict.set_defaults(run=_predict)
    _report_command(commands)


def _report_command(commands) -> None:
    """``report``: a result's report on other data."""
    report = commands.add_parser(
        "report", help="a result's objective, error and constraints on other data",
        description="Recompute a result's report (objective, error, every constraint, rates "
        "with bootstrap intervals) on examples it was not trained on. Exit code 3 when a "
        "constraint of --model fails beyond the tolerance.")
    report.add_argument("result", help="Result JSON written by solve -o")
    report.add_argument("data", help="feature matrix file (npy, npz, csv, svmlight, mtx), or "
                        "the raw table (csv, parquet, feather) of a calibrated model; its "
                        "labels are used when it carries them")
    _format_option(report)
    report.add_argument("--labels", help="labels file, one per row (+1/-1 or 1/0)")
    report.add_argument("--label-column", metavar="NAME",
                        help="take the labels from this column of the data file")
    report.add_argument("--positive-label", action="append", default=[], metavar="VALUE",
                        help="a value of the label column that marks a positive row, such "
                        "as '>50K' (repeat for several; every other row is negative)")
    report.add_argument("--groups", action="extend", nargs="+", default=[],
                        metavar="NAME=FILE", help="a group of the rate constraints as a file "
                        "of one 0/1 per row (repeat the flag or list several)")
    report.add_argument("--group", action="append", default=[],
                        metavar="NAME=COLUMN=VALUE", help="a group of the rate constraints as "
                        "the table rows whose COLUMN holds VALUE, or NAME={predicate} with a "
                        "predicate as a spec's data.groups write it (docs/tables.md); repeat "
                        "for each group")
    report.add_argument("--tolerance", type=float,
                        help="largest violation that passes (default the result's "
                        "solver.tolerance)")
    report.add_argument("--model", default="mixture",
                        choices=("mixture", "mean", "projected", "deterministic"),
                        help="the model whose constraints decide the exit code "
                        "(default mixture)")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(run=_report)


def _format_option(command: argparse.ArgumentParser) -> None:
    """``--format``: the data formats a spec names, for a file whose name does not tell."""
    from worker.data.refs import FORMATS

    command.add_argument("--format", choices=FORMATS,
                         help="the data file's format when its extension does not tell")


def _service_commands(commands) -> None:
    """``serve``, ``worker`` and ``submit``: Redis or a running API."""
    serve = commands.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="uvicorn processes (default 1)")
    serve.set_defaults(run=_serve)
    worker = commands.add_parser("worker", help="run a queue worker (one job at a time)")
    worker.add_argument("--burst", action="store_true", help="quit when the queue is empty")
    worker.set_defaults(run=_worker)
    submit = commands.add_parser("submit", help="submit a spec to a running service")
    submit.add_argument("spec", help="problem spec JSON file ('-' for stdin)")
    submit.add_argument("--url",
                        help="the API's base URL (default $LIGHTTOUCH_URL or localhost:8000)")
    submit.add_argument("--api-key",
                        help="API key (default $LIGHTTOUCH_API_KEY)")
    submit.add_argument("--follow", action="store_true", help="show progress until the job ends")
    submit.add_argument("-o", "--output", help="wait, then write the Result JSON here")
    submit.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    submit.set_defaults(run=_submit)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lighttouch`` console script (engine and service commands)."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (LightTouchError, OSError) as error:
        _console.print(f"error: {error}", style="red", markup=False, highlight=False)
        return 1
    except KeyboardInterrupt:
        _console.print("interrupted", style="red", highlight=False)
        return 130


if __name__ == "__main__":
    sys.exit(main())
