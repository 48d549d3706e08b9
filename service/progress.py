"""The one progress bar of a solve, in a terminal and in Jupyter (rich renders to either):
``lighttouch solve``/``submit`` and :meth:`lighttouch.Job.wait` draw it. It follows the
run's progress reports and ends on the Result's figures (its summary), never on the last
report; :func:`gap_text` is how every LightTouch front end writes a certified gap."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from worker.result import Summary


class Bar:
    """A live bar: progress reports while a job runs, then the Result's summary."""

    def __init__(self, progress: Progress, task: TaskID):
        self._progress, self._task = progress, task

    def report(self, iteration: int, iterations: int, objective: float | None,
               violation: float | None, checks: int) -> None:
        """Draw one progress report (the running average at ``iteration``)."""
        self._progress.update(self._task, completed=iteration, total=iterations,
                              objective=_number(objective, ".6g"),
                              violation=_number(violation, ".2e"), checks=checks)

    def finish(self, summary: Summary) -> None:
        """End on the Result's figures: the mixture's expected objective and largest
        expected violation (and the certified gap, if any)."""
        task = self._progress.tasks[self._task]
        gap = "" if summary.relative_gap is None else f"gap={gap_text(summary.relative_gap)}"
        description = "solved" if summary.feasibility.feasible else "solved, NOT feasible"
        self._progress.update(self._task, description=description, completed=task.total,
                              objective=_number(summary.objective, ".6g"),
                              violation=_number(summary.max_violation, ".2e"), gap=gap)

    def event(self, name: str, data: dict[str, Any]) -> None:
        """Draw one event of a job's stream: a ``progress`` report, or the ``result`` event's
        summary; other events change nothing."""
        if name == "progress":
            self.report(data["iteration"], data["iterations"], data["objective"],
                        data["max_violation"], data["constraint_checks"])
        elif name == "result":
            self.finish(Summary.model_validate(data["summary"]))


@contextmanager
def progress_bar(quiet: bool, console: Console | None = None) -> Iterator[Bar]:
    """A live :class:`Bar` (drawing nothing when ``quiet``)."""
    columns = (TextColumn("[bold]{task.description}"), BarColumn(),
               MofNCompleteColumn(),
               TextColumn("f={task.fields[objective]}"),
               TextColumn("viol={task.fields[violation]}"),
               TextColumn("checks={task.fields[checks]:,}"), TimeElapsedColumn(),
               TextColumn("{task.fields[gap]}"))
    with Progress(*columns, console=console, disable=quiet) as progress:
        yield Bar(progress, progress.add_task("solving", total=None, objective="-",
                                              violation="-", checks=0, gap=""))


def gap_text(relative_gap: float) -> str:
    """A certified relative gap as a percentage of the optimum: two decimals from 0.01% up,
    two significant digits in exponent notation below (``0.37%``, ``1.5e-8%``, ``0%``);
    ``figures.js`` writes it the same way on the dashboard."""
    percent = 100 * max(relative_gap, 0.0)
    if percent == 0:
        return "0%"
    if percent >= 0.01:
        return f"{percent:.2f}%"
    mantissa, exponent = f"{percent:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}%"


def feasibility_text(summary: Summary) -> str:
    """The Result's verdict on its constraints as the CLI and ``figures.js`` write it:
    ``feasible`` or ``NOT feasible``, with the tolerance it was judged at."""
    verdict = summary.feasibility
    word = "feasible" if verdict.feasible else "NOT feasible"
    return f"{word} (tolerance {verdict.tolerance:.3g})"


def summary_text(algorithm: str, summary: Summary) -> str:
    """The one-line outcome of a solve: algorithm, the Result's verdict, objective, largest
    expected violation, members and certified gap."""
    bound = "" if summary.relative_gap is None else \
        f"; projected answer within {gap_text(summary.relative_gap)} of the optimum (certified)"
    return (f"{algorithm}: {feasibility_text(summary)}, objective {summary.objective:.6g}, "
            f"max violation {summary.max_violation:.3g}, {summary.members} member(s){bound}")


def _number(value: float | None, spec: str) -> str:
    return "nan" if value is None else format(value, spec)
