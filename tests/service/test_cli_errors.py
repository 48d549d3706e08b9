"""Every ``lighttouch`` command on every kind of bad input a user can give, each as a real
process: exit code 1 (the input was refused) or 2 (usage), one message on stderr naming
the file, field or flag, and never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from tests.specs import random_spec
from worker.datasets.adult import DATA

#: (case, file name, content) of the bad JSON files a spec or a Result may be.
BAD_JSON = [
    ("missing file", "missing.json", None),
    ("empty file", "empty.json", b""),
    ("not JSON", "text.json", b"{not json"),
    ("not UTF-8", "binary.json", b"\xff\xfe\x00\x01"),
    ("a JSON list", "list.json", b"[1, 2]"),
    ("a JSON number", "number.json", b"3"),
    ("another JSON object", "other.json", b'{"hello": 1}'),
    ("a directory", "folder", "dir"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """The bad inputs, a good spec, its Result and data files good and bad."""
    folder = tmp_path_factory.mktemp("bad")
    for _, name, content in BAD_JSON:
        if content == "dir":
            (folder / name).mkdir()
        elif content is not None:
            (folder / name).write_bytes(content)
    spec = random_spec("hinge", "ordering_pairs", 0, iterations=2000)
    (folder / "spec.json").write_text(json.dumps(spec))
    bad = json.loads(json.dumps(spec))
    bad["solver"]["iterations"] = "many"
    (folder / "bad_values.json").write_text(json.dumps(bad))
    done = run("solve", str(folder / "spec.json"), "-o", str(folder / "result.json"), "-q")
    assert done.returncode == 0, done.stderr
    width = len(json.loads((folder / "result.json").read_text())["mean"]["solution"])
    rows = np.random.default_rng(0).normal(size=(20, width))
    np.save(folder / "x.npy", rows)
    np.save(folder / "wide.npy", np.ones((20, width + 3)))
    np.savetxt(folder / "x.csv", rows, delimiter=",")
    np.save(folder / "x.dat.npy", rows)
    (folder / "x.dat").write_bytes((folder / "x.dat.npy").read_bytes())
    (folder / "empty.csv").write_bytes(b"")
    (folder / "words.csv").write_text("a,b\nx,y\n")
    shutil.copy(DATA / "adult.test", folder / "adult_test")   # no extension
    return folder


def run(*args: str) -> subprocess.CompletedProcess:
    """``lighttouch ARGS``; leading ``NAME=VALUE`` arguments set environment variables."""
    settings = dict(arg.split("=", 1) for arg in args if arg.startswith("LIGHTTOUCH_"))
    argv = [arg for arg in args if not arg.startswith("LIGHTTOUCH_")]
    return subprocess.run([sys.executable, "-m", "service.cli", *argv], capture_output=True,
                          text=True, timeout=300, check=False, env={**os.environ, **settings})


def cases(folder: Path) -> list[tuple[str, list[str], str]]:
    """(what, argv, words stderr must hold) for every command × bad input."""
    spec, result = str(folder / "spec.json"), str(folder / "result.json")
    matrix = str(folder / "x.npy")
    json_inputs = [(what, str(folder / name)) for what, name, _ in BAD_JSON]
    found: list[tuple[str, list[str], str]] = []
    for what, path in [*json_inputs, ("a Result", result),
                       ("bad field values", str(folder / "bad_values.json"))]:
        name = Path(path).name
        words = "solver.iterations" if what == "bad field values" else name
        found += [(f"solve: {what}", ["solve", path, "-q"], words),
                  (f"validate: {what}", ["validate", path], words)]
    for what, path in [*json_inputs, ("a spec", spec)]:
        name = Path(path).name
        found += [(f"predict: {what} as the result", ["predict", path, matrix], name),
                  (f"report: {what} as the result", ["report", path, matrix], name)]
    data_inputs = [
        ("missing data", "nothing.npy", "nothing.npy"),
        ("empty csv", "empty.csv", "empty.csv"),
        ("text in a matrix", "words.csv", "words.csv"),
        ("no extension", "adult_test", "--format"),
        ("unknown extension", "x.dat", "--format"),
        ("a directory as data", "folder", "folder"),
        ("too many columns", "wide.npy", "wide.npy"),
        ("a spec as data", "spec.json", "--format"),
    ]
    for what, name, words in data_inputs:
        found += [(f"predict: {what}", ["predict", result, str(folder / name)], words),
                  (f"report: {what}", ["report", result, str(folder / name)], words)]
    return found + flag_cases(folder)


def flag_cases(folder: Path) -> list[tuple[str, list[str], str]]:
    """(what, argv, words) for every bad flag value, and the service commands."""
    spec, result = str(folder / "spec.json"), str(folder / "result.json")
    matrix = str(folder / "x.npy")
    return [
        ("predict: unknown --mode", ["predict", result, matrix, "--mode", "best"], "--mode"),
        ("predict: --seed not a number", ["predict", result, matrix, "--seed", "x"], "--seed"),
        ("predict: unknown --format", ["predict", result, matrix, "--format", "orc"],
         "--format"),
        ("predict: --format that does not read the file",
         ["predict", result, str(folder / "x.csv"), "--format", "npy"], "x.csv"),
        ("report: --groups without a file", ["report", result, matrix, "--groups", "a"],
         "--groups"),
        ("report: --groups file missing",
         ["report", result, matrix, "--groups", f"a={folder / 'none.npy'}"], "none.npy"),
        ("report: --group on a matrix", ["report", result, matrix, "--group", "a=sex=F"],
         "--group"),
        ("report: --labels missing",
         ["report", result, matrix, "--labels", str(folder / "none.npy")], "none.npy"),
        ("report: --label-column of an npy", ["report", result, matrix, "--label-column", "y"],
         "label_column"),
        ("report: --positive-label alone", ["report", result, matrix, "--positive-label", "1"],
         "--positive-label"),
        ("report: --tolerance not a number", ["report", result, matrix, "--tolerance", "x"],
         "--tolerance"),
        ("report: unknown --model", ["report", result, matrix, "--model", "best"], "--model"),
        ("report: unknown --format", ["report", result, matrix, "--format", "orc"],
         "--format"),
        ("no command", [], "command"),
        ("unknown command", ["optimize"], "optimize"),
        ("serve: --port not a number", ["serve", "--port", "x"], "--port"),
        ("worker: unreachable Redis", ["LIGHTTOUCH_REDIS_URL=redis://127.0.0.1:9/0", "worker",
                                       "--burst"], "LIGHTTOUCH_REDIS_URL"),
        ("worker: a setting out of range", ["LIGHTTOUCH_HEARTBEAT_S=0", "worker", "--burst"],
         "LIGHTTOUCH_HEARTBEAT_S"),
        ("submit: missing file", ["submit", str(folder / "missing.json"), "--url",
                                  "http://127.0.0.1:9"], "missing.json"),
        ("submit: unreachable service", ["submit", spec, "--url", "http://127.0.0.1:9"],
         "127.0.0.1:9"),
        ("submit: not a URL", ["submit", spec, "--url", "nowhere"], "nowhere"),
    ]


@pytest.mark.slow     # 75 processes: about 5 minutes on a loaded 2-core machine
def test_no_command_answers_a_bad_input_with_a_traceback(files):
    """Each pair ends in exit 1 or 2 and one message naming what to fix; the count of
    pairs is pinned so that a case cannot silently drop out."""
    table = cases(files)
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = list(pool.map(lambda case: run(*case[1]), table))
    failures = []
    for (what, argv, words), process in zip(table, done, strict=True):
        output = process.stdout + process.stderr
        message = process.stderr.strip()
        problems = [
            f"exit {process.returncode}" if process.returncode not in (1, 2) else "",
            "a traceback" if "Traceback" in output else "",
            f"no {words!r} in the message" if words not in message else "",
            "a blank line in the message" if "\n\n" in message else "",
            "more than one line" if process.returncode == 1 and "\n" in message else "",
        ]
        if any(problems):
            failures.append(f"{what} ({' '.join(argv)}): {', '.join(p for p in problems if p)}"
                            f"\n{message[-600:]}")
    assert not failures, "\n\n".join(failures)
    assert len(table) == 75
