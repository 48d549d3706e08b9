"""The ``lighttouch`` command with the service's subcommands: ``serve``, ``worker``, ``submit``.

``solve`` and ``validate`` come from :func:`worker.cli.build_parser`; the commands here need
Redis or an API. Configuration is the ``LIGHTTOUCH_*`` environment (:class:`Settings`). Each
command imports what it needs when it runs, so ``solve`` does not load the web stack.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from worker.cli import build_parser as build_engine_parser
from worker.errors import LightTouchError

_console = Console(stderr=True)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.settings import load_settings

    load_settings()   # fail here, naming the variable, rather than in every uvicorn process
    uvicorn.run("service.app:create_app", factory=True, host=args.host, port=args.port,
                workers=args.workers, timeout_graceful_shutdown=5, log_level="info")
    return 0


def _worker(args: argparse.Namespace) -> int:
    from redis import Redis

    from service.settings import load_settings
    from worker.queue.jobs import run_worker

    settings = load_settings()
    run_worker(Redis.from_url(settings.redis_url), heartbeat_s=settings.heartbeat_s,
               burst=args.burst)
    return 0


def _submit(args: argparse.Namespace) -> int:
    from service import client

    spec = sys.stdin.buffer.read() if args.spec == "-" else Path(args.spec).read_bytes()
    with client.connect(args.url, args.api_key) as http, client.reporting_unreachable(args.url):
        answer = client.submit(http, spec)
        _console.print(f"job {answer['id']} queued", highlight=False)
        if not (args.follow or args.output):
            sys.stdout.write(json.dumps(answer) + "\n")
            return 0
        with _progress_bar(args.quiet) as report:
            final = client.follow(http, answer["id"], report)
        if final["status"] != "succeeded":
            _console.print(f"job {final['id']} {final['status']}: {final.get('error') or ''}",
                           style="red", markup=False, highlight=False)
            return 1
        result = client.check(http.get(final["links"]["result"])).content
    if args.output:
        Path(args.output).write_bytes(result + b"\n")
        _console.print(f"result written to {args.output}", highlight=False)
    else:
        sys.stdout.buffer.write(result + b"\n")
    return 0


@contextmanager
def _progress_bar(quiet: bool) -> Iterator[Callable[[dict], None]]:
    """A live bar over progress events: iteration, objective, max violation, checks."""
    columns = (TextColumn("[bold]solving"), BarColumn(),
               MofNCompleteColumn(),
               TextColumn("f={task.fields[objective]}"),
               TextColumn("viol={task.fields[violation]}"),
               TextColumn("checks={task.fields[checks]:,}"), TimeElapsedColumn())
    with Progress(*columns, console=_console, disable=quiet) as bar:
        task = bar.add_task("solving", total=None, objective="-", violation="-", checks=0)

        def report(progress: dict) -> None:
            bar.update(task, completed=progress["iteration"], total=progress["iterations"],
                       objective=_number(progress["objective"], ".6g"),
                       violation=_number(progress["max_violation"], ".2e"),
                       checks=progress["constraint_checks"])

        yield report


def _number(value: float | None, spec: str) -> str:
    return "nan" if value is None else format(value, spec)


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The engine parser's subcommand group (until ``build_parser`` hands it out)."""
    return next(action for action in parser._actions
                if isinstance(action, argparse._SubParsersAction))


def build_parser() -> argparse.ArgumentParser:
    """The engine's parser plus ``serve``, ``worker`` and ``submit``."""
    parser = build_engine_parser()
    commands = _subcommands(parser)
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
    submit.add_argument("--url", default=os.environ.get("LIGHTTOUCH_URL", "http://localhost:8000"),
                        help="the API's base URL (default $LIGHTTOUCH_URL or localhost:8000)")
    submit.add_argument("--api-key", default=os.environ.get("LIGHTTOUCH_API_KEY"),
                        help="API key (default $LIGHTTOUCH_API_KEY)")
    submit.add_argument("--follow", action="store_true", help="show progress until the job ends")
    submit.add_argument("-o", "--output", help="wait, then write the Result JSON here")
    submit.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    submit.set_defaults(run=_submit)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lighttouch`` console script (engine and service commands)."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (LightTouchError, OSError) as error:
        _console.print(f"error: {error}", style="red", markup=False, highlight=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
