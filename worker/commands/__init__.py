"""What ``lighttouch solve``, ``validate``, ``predict`` and ``report`` do, in this process
and without Redis: read the files, call the engine, return what to print. The command line
itself (one parser, one progress bar) is ``service/cli.py``; the files are read by
:mod:`worker.commands.files`, ``report``'s data by :mod:`worker.commands.report`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from worker.commands.files import file_ref, read_result, read_spec
from worker.commands.report import ReportData, report_file
from worker.errors import SpecError
from worker.result import Result
from worker.settings import budgeted_settings
from worker.spec.models import Spec, parse_spec

if TYPE_CHECKING:
    from worker.algorithms.run.loop import ProgressCallback

__all__ = ["ReportData", "parse_spec_file", "predict_file", "read_spec",
           "report_file", "solve_spec", "validate_file"]


def parse_spec_file(spec_path: str) -> Spec:
    """The spec in ``spec_path`` ('-': stdin), read and validated (before anything runs);
    each refusal names the file."""
    document = read_spec(spec_path)
    name = "stdin" if spec_path == "-" else spec_path
    if isinstance(document, dict) and "mean" in document and "objective" not in document:
        raise SpecError.at(name, "a Result, not a problem spec; predict and report take a "
                           "Result, solve and validate a spec")
    try:
        return parse_spec(document)
    except SpecError as error:
        raise SpecError.at(name, str(error)) from None


def solve_spec(spec: Spec, progress: ProgressCallback | None = None) -> Result:
    """Solve a validated spec, reporting progress between chunks, under the settings of
    this process's environment (resolved here, at the command; the memory estimate held to
    ``LIGHTTOUCH_MAX_JOB_BYTES``)."""
    from worker.pipeline.solve import solve

    return solve(spec, progress=progress, settings=budgeted_settings())


def validate_file(spec_path: str) -> dict:
    """What the spec would run (sizes, algorithm, memory estimate, placement), without
    solving, under the settings of this process's environment (resolved here, at the
    command; the memory estimate held to ``LIGHTTOUCH_MAX_JOB_BYTES``)."""
    spec = parse_spec_file(spec_path)
    from worker.pipeline.validate import summarize_spec

    return summarize_spec(spec, settings=budgeted_settings())


def predict_file(result_path: str, examples_path: str, mode: str, seed: int,
                 data_format: str | None = None) -> dict:
    """Scores of the examples under a Result's mixture (``mode`` as in
    :meth:`worker.mixture.Mixture.score`), and which are positive (one score) or each
    example's class (K scores); ``data_format`` names the file's format when its name
    does not tell."""
    from worker.data.read import read_matrix
    from worker.mixture import Mixture, predictions

    mixture = Mixture.from_result(read_result(result_path))
    ref, where = file_ref(examples_path, data_format)
    if mixture.table is not None:     # a calibrated model scores raw table rows
        from worker.tables.read import TABLE_READERS, read_table

        if ref.format not in TABLE_READERS:
            raise SpecError.at(examples_path, "a calibrated model scores a table's rows; "
                               f"give a {', '.join(TABLE_READERS)} file (this one reads as "
                               f"{ref.format})")
        features: Any = read_table(ref, mixture.table.columns, examples_path, **where)
    else:
        features = read_matrix(ref, examples_path, **where)
        inputs = mixture.solutions.shape[1] if mixture.network is None else \
            mixture.network.inputs
        if features.shape[1] != inputs:
            raise SpecError.at(examples_path, f"{features.shape[1]} columns; the result's "
                               f"model takes {inputs}")
    scores = mixture.score(features, mode, seed)
    predicted = predictions(scores)
    if mixture.classes == 1:
        return {"mode": mode, "seed": seed, "scores": scores.tolist(),
                "positive": predicted.astype(bool).tolist()}
    return {"mode": mode, "seed": seed, "scores": scores.tolist(), "classes": predicted.tolist()}
