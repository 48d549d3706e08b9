"""A report as a text table (``lighttouch report``), and whether a model's constraints hold."""

from __future__ import annotations

from worker.report.schema import ConstraintReport, DataReport, ModelReport, RateReport


def failures(data: DataReport, model: str) -> list[str]:
    """The constraints of ``model`` violated beyond the report's tolerance on ``data``:
    ``constraints[k]`` each."""
    return [f"constraints[{c.index}]" for c in data.models[model].constraints if c.violated]


def report_table(data: DataReport, title: str) -> str:
    """One line per model (objective, error, max violation), then one per constraint and
    rate term with each model's value, a rate constraint's sides and their difference, and
    a group loss's mean loss and bound."""
    names = list(data.models)
    width = 18
    lines = [f"{title}: {data.examples} examples",
             f"{'':<34}" + "".join(f"{name:>{width}}" for name in names)]
    for field in ("objective", "error", "max_violation"):
        lines.append(f"{field:<34}" + "".join(
            _cell(getattr(data.models[n], field), width) for n in names))
    first: ModelReport = data.models[names[0]]
    for k, constraint in enumerate(first.constraints):
        row = [data.models[n].constraints[k] for n in names]
        lines.append(f"{_label(constraint):<34}" + "".join(_violations(c, width) for c in row))
        for t, term in enumerate(constraint.terms):
            cells = "".join(_rate(data.models[n].constraints[k].terms[t], width) for n in names)
            lines.append(f"  {_term(term):<32}" + cells)
        if constraint.type == "group_loss":
            group = "all" if constraint.group is None else constraint.group
            for side, name in (("lhs", f"mean {constraint.loss}({group}) n={constraint.examples}"),
                               ("rhs", "bound")):
                cells = "".join(_cell(getattr(data.models[n].constraints[k], side), width)
                                for n in names)
                lines.append(f"  {name[:32]:<32}" + cells)
        if constraint.type == "rate":
            for side in ("lhs", "rhs", "difference"):
                cells = "".join(_cell(getattr(data.models[n].constraints[k], side), width)
                                for n in names)
                lines.append(f"  {'lhs - rhs' if side == 'difference' else side:<32}" + cells)
    return "\n".join(lines)


def _label(constraint: ConstraintReport) -> str:
    return f"constraints[{constraint.index}] {constraint.type}"


def _term(term: RateReport) -> str:
    group = "all" if term.group is None else term.group
    scale = "" if term.scale == 1 else f"{term.scale:g}*"
    return f"{scale}{term.metric}({group}) n={term.examples}"[:32]


def _cell(value: float | None, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.4g}"


def _violations(constraint: ConstraintReport, width: int) -> str:
    """g's worst value, starred when some row is violated beyond the tolerance."""
    if constraint.worst is None:
        return f"{'-':>{width}}"
    mark = f"*{constraint.violated}" if constraint.violated else ""
    return f"{f'{constraint.worst:.3g}{mark}':>{width}}"


def _rate(term: RateReport, width: int) -> str:
    if term.value is None:
        return f"{'-':>{width}}"
    if term.interval is None:
        return f"{term.value:>{width}.4f}"
    low, high = term.interval
    text = f"{term.value:.3f}[{low:.2f},{high:.2f}]"
    return f"{text:>{max(width, len(text) + 1)}}"
