"""What ``lighttouch solve``, ``validate`` and ``predict`` do, in this process and without
Redis: read the files, call the engine, return what to print. The command line itself (one
parser, one progress bar) is ``service/cli.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from worker.algorithms.loop import ProgressCallback
from worker.errors import SpecError
from worker.pipeline.validate import summarize_spec
from worker.result import Result
from worker.spec.json_text import decode_spec_json


def read_spec(path: str) -> Any:
    """Decode a JSON file ('-': stdin); unreadable or non-JSON files are spec errors naming it."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SpecError.at("", f"cannot read {path}: {error.strerror or error}") from None
    return decode_spec_json(text, path)


def solve_file(spec_path: str, progress: ProgressCallback | None = None) -> Result:
    """Solve the spec in ``spec_path``, reporting progress between chunks."""
    from worker.pipeline.solve import solve

    return solve(read_spec(spec_path), progress=progress)


def validate_file(spec_path: str) -> dict:
    """What the spec would run (sizes, algorithm, memory estimate), without solving."""
    return summarize_spec(read_spec(spec_path))


def predict_file(result_path: str, examples_path: str, mode: str, seed: int) -> dict:
    """Scores of the examples under a Result's mixture (``mode`` as in
    :meth:`worker.mixture.Mixture.score`), and which are positive (one score) or each
    example's class (K scores)."""
    from worker.data.read import read_matrix
    from worker.data.refs import DataRef
    from worker.mixture import Mixture, predictions
    from worker.settings import data_settings

    mixture = Mixture.from_result(read_spec(result_path))
    examples = Path(examples_path).resolve()
    reference = DataRef.model_validate({"uri": examples.as_uri()})
    if mixture.table is not None:     # a calibrated model scores raw table rows
        from worker.tables.read import read_table

        features = read_table(reference, mixture.table.columns, examples_path,
                              roots=[examples.parent], settings=data_settings())
    else:
        features = read_matrix(reference, examples_path, roots=[examples.parent],
                               settings=data_settings())
    scores = mixture.score(features, mode, seed)
    predicted = predictions(scores)
    if mixture.classes == 1:
        return {"mode": mode, "seed": seed, "scores": scores.tolist(),
                "positive": predicted.astype(bool).tolist()}
    return {"mode": mode, "seed": seed, "scores": scores.tolist(), "classes": predicted.tolist()}
