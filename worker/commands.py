"""What ``lighttouch solve``, ``validate``, ``predict`` and ``report`` do, in this process
and without Redis: read the files, call the engine, return what to print. The command line
itself (one parser, one progress bar) is ``service/cli.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from worker.algorithms.run.loop import ProgressCallback
from worker.errors import DataError, SpecError
from worker.pipeline.validate import summarize_spec
from worker.report.schema import Report
from worker.result import Result
from worker.settings import job_settings
from worker.spec.json_text import decode_spec_json


def read_spec(path: str) -> Any:
    """Decode a JSON file ('-': stdin); unreadable or non-JSON files are spec errors naming it."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SpecError.at("", f"cannot read {path}: {error.strerror or error}") from None
    return decode_spec_json(text, path)


def solve_file(spec_path: str, progress: ProgressCallback | None = None) -> Result:
    """Solve the spec in ``spec_path``, reporting progress between chunks, under the
    settings of this process's environment (resolved here, at the command)."""
    from worker.pipeline.solve import solve

    return solve(read_spec(spec_path), progress=progress, settings=job_settings())


def validate_file(spec_path: str) -> dict:
    """What the spec would run (sizes, algorithm, memory estimate), without solving, under
    the settings of this process's environment (resolved here, at the command)."""
    return summarize_spec(read_spec(spec_path), settings=job_settings())


def predict_file(result_path: str, examples_path: str, mode: str, seed: int) -> dict:
    """Scores of the examples under a Result's mixture (``mode`` as in
    :meth:`worker.mixture.Mixture.score`), and which are positive (one score) or each
    example's class (K scores)."""
    from worker.data.read import read_matrix
    from worker.mixture import Mixture, predictions

    mixture = Mixture.from_result(read_spec(result_path))
    ref, where = _file_ref(examples_path)
    if mixture.table is not None:     # a calibrated model scores raw table rows
        from worker.tables.read import read_table

        features = read_table(ref, mixture.table.columns, examples_path, **where)
    else:
        features = read_matrix(ref, examples_path, **where)
    scores = mixture.score(features, mode, seed)
    predicted = predictions(scores)
    if mixture.classes == 1:
        return {"mode": mode, "seed": seed, "scores": scores.tolist(),
                "positive": predicted.astype(bool).tolist()}
    return {"mode": mode, "seed": seed, "scores": scores.tolist(), "classes": predicted.tolist()}


def report_file(result_path: str, data_path: str, labels_path: str | None,
                groups: list[str], tolerance: float | None) -> Report:
    """The Result's report recomputed on the examples in ``data_path`` (its ``validation``):
    labels from ``labels_path`` or the data file when it carries them, groups as
    ``NAME=FILE`` (0/1 per row); ``tolerance`` (default the report's) decides what is
    violated."""
    from worker.losses import CLASSES, LOSSES, SOFTMAX_CROSS_ENTROPY
    from worker.pipeline.reporting import deployed_points
    from worker.report.build import report_labels, report_on
    from worker.report.metrics import Examples

    result = Result.model_validate(read_spec(result_path))
    if result.report is None:
        raise SpecError.at("report", f"{result_path} carries no report; solve one empirical "
                           "risk (not max_of, quadratic or pairwise) to get one")
    loss = result.report.objective.loss
    features, labels = _read_examples(data_path, labels_path)
    n, width = features.shape
    inputs = len(result.mean.solution) if result.model is None else result.model.sizes[0]
    if width != inputs:
        raise SpecError.at(data_path, f"{width} columns; the result's model takes {inputs}")
    if labels is not None:
        labels = report_labels(loss, labels, labels_path or data_path,
                               f"{labels_path or data_path}: label")
    masks = {}
    for given in groups:
        name, _, path = given.partition("=")
        if not name or not path:
            raise SpecError.at("--groups", f"{given!r}: give NAME=FILE")
        vector = _read_vector(path)
        if vector.shape[0] != n or not np.isin(vector, (0.0, 1.0)).all():
            raise SpecError.at(f"--groups {name}", f"{path}: give one 0/1 entry per row ({n})")
        masks[name] = vector != 0
    multiclass = loss == SOFTMAX_CROSS_ENTROPY
    classes = not multiclass and LOSSES[loss].labels is CLASSES
    examples = Examples(sp.csr_matrix(features, dtype=np.float64), labels,
                        labels is not None and classes, masks,
                        labels is not None and multiclass)
    return report_on(result.report, examples, deployed_points(result),
                     result.report.tolerance if tolerance is None else tolerance)


def _file_ref(path: str) -> tuple[Any, dict[str, Any]]:
    """A local file as a data reference, and the reader's keywords that let it be read: its
    folder as the root, and the data settings (resolved here, at the command)."""
    from worker.data.refs import DataRef
    from worker.settings import data_settings

    where = Path(path).resolve()
    return (DataRef.model_validate({"uri": where.as_uri()}),
            {"roots": [where.parent], "settings": data_settings()})


def _read_examples(data_path: str, labels_path: str | None):
    """Features (n, d) of a file, and labels from ``labels_path`` or the file (None when
    neither has them)."""
    from worker.data.read import read_examples, read_matrix

    ref, where = _file_ref(data_path)
    if labels_path is not None:
        return read_matrix(ref, data_path, **where), _read_vector(labels_path)
    try:
        return read_examples(ref, None, data_path, **where)
    except DataError:
        return read_matrix(ref, data_path, **where), None


def _read_vector(path: str) -> np.ndarray:
    from worker.data.read import read_vector

    ref, where = _file_ref(path)
    return read_vector(ref, path, **where)
