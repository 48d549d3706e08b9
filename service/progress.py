"""The one progress bar of a solve, in a terminal and in Jupyter (rich renders to either):
``lighttouch solve``/``submit`` and :meth:`lighttouch.Job.wait` draw it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@contextmanager
def progress_bar(quiet: bool, console: Console | None = None) -> Iterator[Callable[..., None]]:
    """A live bar: ``report(iteration, iterations, objective, violation, checks)``."""
    columns = (TextColumn("[bold]solving"), BarColumn(),
               MofNCompleteColumn(),
               TextColumn("f={task.fields[objective]}"),
               TextColumn("viol={task.fields[violation]}"),
               TextColumn("checks={task.fields[checks]:,}"), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=quiet) as bar:
        task = bar.add_task("solving", total=None, objective="-", violation="-", checks=0)

        def report(iteration: int, iterations: int, objective: float | None,
                   violation: float | None, checks: int) -> None:
            bar.update(task, completed=iteration, total=iterations,
                       objective=_number(objective, ".6g"),
                       violation=_number(violation, ".2e"), checks=checks)

        yield report


def report_event(report: Callable[..., None], progress: dict) -> None:
    """Draw one progress event (the API's ``progress`` JSON) with ``report``."""
    report(progress["iteration"], progress["iterations"], progress["objective"],
           progress["max_violation"], progress["constraint_checks"])


def _number(value: float | None, spec: str) -> str:
    return "nan" if value is None else format(value, spec)
