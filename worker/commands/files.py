"""The files the commands read: a spec, a Result, a data file (with the format a flag
names when its name does not tell), each refusal a :class:`~worker.errors.SpecError` naming
the file and what to give instead."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from worker.errors import SpecError
from worker.result import Result
from worker.spec.issues import readable_issues
from worker.spec.json_text import decode_spec_json


def read_spec(path: str) -> Any:
    """Decode a JSON file ('-': stdin); unreadable or non-JSON files are spec errors naming it."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else \
            "not UTF-8 text; give a JSON file"
        raise SpecError.at("", f"cannot read {path}: {reason}") from None
    return decode_spec_json(text, path)


def read_result(path: str) -> Result:
    """The Result in a JSON file written by ``lighttouch solve -o`` (a spec, or anything
    else, is refused naming the file)."""
    document = read_spec(path)
    if isinstance(document, dict) and "objective" in document and "mean" not in document:
        raise SpecError.at("", f"{path} is a problem spec, not a Result; solve it first "
                           f"(lighttouch solve {path} -o result.json) and give the result")
    if not isinstance(document, dict):
        raise SpecError.at("", f"{path} is not a Result (a JSON object written by "
                           f"lighttouch solve -o); it holds a {type(document).__name__}")
    try:
        return Result.model_validate(document)
    except ValidationError as error:
        issues = readable_issues(error.errors(include_url=False))
        raise SpecError([("", f"{path} is not a Result written by lighttouch solve -o")]
                        + [(f"{path}: {where}", message) for where, message in issues[:3]]
                        ) from None


def file_ref(path: str, data_format: str | None = None,
             **options: Any) -> tuple[Any, dict[str, Any]]:
    """A local file as a data reference (``data_format``: its format, else its extension's;
    ``options``: the reference's format options), and the reader's keywords that let it be
    read: its folder as the root, and the data settings (resolved here, at the command)."""
    from worker.data.refs import DataRef
    from worker.settings import data_settings

    where = Path(path).resolve()
    if not where.is_file():
        raise SpecError.at("", f"cannot read {path}: "
                           f"{'a directory' if where.is_dir() else 'no such file'}")
    given = {key: value for key, value in options.items() if value is not None}
    try:
        ref = DataRef.model_validate({"uri": where.as_uri(), "format": data_format, **given})
    except ValidationError as error:
        reasons = "; ".join(message for _, message in
                            readable_issues(error.errors(include_url=False)))
        raise SpecError.at(path, reasons.replace('set "format"', "give --format")) from None
    return ref, {"roots": [where.parent], "settings": data_settings()}
