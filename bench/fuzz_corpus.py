"""A deterministic corpus of hostile requests for the API (:mod:`bench.fuzz`).

Families, each drawn from a seeded random generator:

- ``value``: one value of a valid spec (any depth, containers too) replaced by raw JSON
  text: NaN and ±Infinity, integers of thousands of digits or just past int64, 1e308, lone
  surrogates, nesting 40 and 1,000 deep, strings and booleans for numbers, long strings,
  references to files outside the roots and to cloud metadata addresses;
- ``shape``: a key of a valid spec deleted, or an unknown key added;
- ``index``: out-of-range and negative indices in ordering pairs and chains, COO matrices
  and lattice shapes;
- ``data``: a data reference at a matrix or vector position whose ``data:`` URI holds a
  hostile file: zip bombs (deflate and bzip2, a lying zip directory), npy headers claiming
  10^12 values, pickled object arrays, sparse and Matrix Market headers with sides past 2^27,
  svmlight feature indices of 2·10^9 or negative, parquet and feather bombs, random and
  truncated bytes, NaN inside the values, a declared format that does not match;
- ``body``: bodies that are not a spec: truncated JSON, invalid UTF-8, a byte-order mark,
  top-level scalars, empty, duplicated keys;
- ``media``: a valid body sent as text/plain, XML, a form, multipart or no Content-Type;
- ``http``: other methods on the spec routes, hostile job ids and query parameters.

Each :class:`Case` says what to send; the corpus never depends on the server's answers.
"""

from __future__ import annotations

import base64
import copy
import functools
import io
import json
import random
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench import hostile_files
from tests.local_stack import small_spec

#: Seconds of solving any accepted case may take (the stack's job timeout caps it too).
TIME_LIMIT_S = 5.0

#: Raw JSON texts put in place of a value.
RAW_VALUES = [
    "NaN", "Infinity", "-Infinity", "1" + "0" * 5000, "-" + "9" * 4301, "1e308", "-1e308",
    "1e-320", "9223372036854775807", "9223372036854775808", "18446744073709551616",
    "-9223372036854775809", "-1", "0", "2147483648", "1.5", '"\\udc80"', '"a\\ud800b"',
    "[" * 1000 + "]" * 1000, "[" * 40 + "1" + "]" * 40, '{"a": ' * 40 + "1" + "}" * 40,
    "true", "false", "null", '""', '"4"', '"auto"', '"' + "x" * 100_000 + '"', "[]", "{}",
    "[1, [2]]", "[[1, 2], [3]]", '{"uri": "file:///etc/passwd"}',
    '{"uri": "file:///proc/self/environ", "format": "csv"}',
    '{"uri": "http://169.254.169.254/latest/meta-data/", "format": "npy"}',
    '{"uri": "http://127.0.0.1:6379/", "format": "csv"}', '{"uri": "s3://bucket"}',
    '{"uri": "gopher://x/"}', '{"uri": "data:,abc", "format": "npy"}',
    '{"format": "coo", "shape": [2, 2], "row": [0], "col": [5], "data": [1]}',
]

#: Positions of a spec that hold a matrix or a vector, and the base spec they belong to.
DATA_POSITIONS = [("quadratic", ("objective", "Q")), ("quadratic", ("objective", "c")),
                  ("quadratic", ("bounds", "lower")), ("learning", ("objective", "data",
                                                                     "features")),
                  ("learning", ("objective", "data", "labels"))]

MEDIA_TYPES = ["text/plain", "application/xml", "application/x-www-form-urlencoded",
               "multipart/form-data; boundary=x", None, "application/jsonx",
               "application/json-seq", "text/json; charset=utf-8", "*/*"]


@dataclass(frozen=True)
class Case:
    """One request: ``family`` and ``name`` say what is hostile about it."""

    family: str
    name: str
    method: str
    path: str
    body: bytes | None = None
    content_type: str | None = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def is_spec(self) -> bool:
        """A body sent to the spec routes (also worth submitting as a job)."""
        return self.method == "POST" and self.path in ("/v1/validate", "/v1/jobs")


def base_specs() -> dict[str, dict]:
    """The valid specs mutated: a 4-d quadratic with a chain, and hinge on an npy matrix."""
    quadratic = small_spec(iterations=20000, time_limit_s=TIME_LIMIT_S)
    features = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0], [1.5, 0.0, 1.0], [0.0, 0.2, 0.3]])
    learning = {"spec_version": 1, "bounds": {"lower": -1, "upper": 1},
                "objective": {"type": "empirical_risk", "loss": "hinge", "data": {
                    "features": {"uri": data_uri(_npy(features), "application/x-npy")},
                    "labels": [1.0, -1.0, 1.0, -1.0]}},
                "constraints": [{"type": "ordering", "pairs": [[0, 1], [1, 2]]}],
                "solver": {"iterations": 5000, "seed": 3, "time_limit_s": TIME_LIMIT_S}}
    return {"quadratic": quadratic, "learning": learning}


def data_uri(payload: bytes, media: str) -> str:
    return f"data:{media};base64,{base64.b64encode(payload).decode()}"


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _paths(value: Any, location: tuple = ()) -> Iterator[tuple]:
    """Every location in a JSON value, containers and leaves, the root excluded."""
    if location:
        yield location
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*location, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*location, index))


def _with_raw(spec: dict, location: tuple, raw: str) -> bytes:
    """The spec's JSON text with the value at ``location`` replaced by ``raw`` text."""
    marker = "\u0001RAW\u0001"
    copied = copy.deepcopy(spec)
    target = copied
    for step in location[:-1]:
        target = target[step]
    target[location[-1]] = marker
    return json.dumps(copied).replace(json.dumps(marker), raw).encode("utf-8", "surrogatepass")


def _edited(spec: dict, location: tuple, edit: Callable[[Any, Any], None]) -> bytes:
    copied = copy.deepcopy(spec)
    target = copied
    for step in location[:-1]:
        target = target[step]
    edit(target, location[-1])
    return json.dumps(copied).encode()


def _spec_case(family: str, name: str, body: bytes, rng: random.Random) -> Case:
    return Case(family, name, "POST", rng.choice(["/v1/validate", "/v1/jobs"]), body)


def value_cases(rng: random.Random, count: int) -> list[Case]:
    specs = base_specs()
    cases = []
    for _ in range(count):
        which = rng.choice(list(specs))
        location = rng.choice(list(_paths(specs[which])))
        raw = rng.choice(RAW_VALUES)
        shown = raw if len(raw) <= 40 else f"{raw[:20]}...({len(raw)} chars)"
        cases.append(_spec_case("value", f"{which} {_dotted(location)} = {shown}",
                                _with_raw(specs[which], location, raw), rng))
    return cases


def shape_cases(rng: random.Random, count: int) -> list[Case]:
    specs = base_specs()
    cases = []
    for _ in range(count):
        which = rng.choice(list(specs))
        objects = [loc for loc in _paths(specs[which]) if _at(specs[which], loc[:-1]) is not None
                   and isinstance(_at(specs[which], loc[:-1]), dict)]
        location = rng.choice(objects)
        if rng.random() < 0.5:
            body = _edited(specs[which], location, lambda target, key: target.pop(key))
            name = f"{which} without {_dotted(location)}"
        else:
            extra = rng.choice(["unknown", "__proto__", "$ref", "spec_version", ""])
            body = _edited(specs[which], location,
                           lambda target, key, extra=extra: target.update({extra + "x": 1}))
            name = f"{which} {_dotted(location[:-1])} with an unknown key"
        cases.append(_spec_case("shape", name, body, rng))
    return cases


def index_cases(rng: random.Random, count: int) -> list[Case]:
    spec = base_specs()["quadratic"]
    big = [4, 5, -1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30]
    cases = []
    for _ in range(count):
        kind = rng.choice(["pairs", "chain", "coo", "lattice", "dimension"])
        value = rng.choice(big)
        copied = copy.deepcopy(spec)
        if kind == "pairs":
            copied["constraints"] = [{"type": "ordering", "pairs": [[0, value]]}]
        elif kind == "chain":
            copied["constraints"] = [{"type": "ordering", "chain": [value, 0]}]
        elif kind == "coo":
            copied["objective"]["Q"] = {"format": "coo", "shape": [4, 4], "row": [0, value],
                                        "col": [0, 1], "data": [1.0, 0.5]}
        elif kind == "lattice":
            copied["constraints"] = [{"type": "monotone_lattice", "shape": [2, value],
                                      "increasing": [0]}]
        else:
            copied["dimension"] = value
        cases.append(_spec_case("index", f"{kind} with {value}",
                                json.dumps(copied).encode(), rng))
    return cases


@functools.cache
def hostile_payloads() -> list[tuple[str, bytes, str | None]]:
    """(name, bytes, format) of the data files; format None lets the media type decide."""
    features = np.arange(12.0).reshape(4, 3)
    npy = _npy(features)
    nan = features.copy()
    nan[2, 1] = np.nan
    parquet = hostile_files.parquet_bomb(2**25)
    feather = hostile_files.feather_bomb(2**25)
    return [
        ("npz bomb 1 GiB", hostile_files.npz_bomb(2**27), "npz"),
        ("npz bomb 128 MiB", hostile_files.npz_bomb(2**24), "npz"),
        ("npz bzip2 member", hostile_files.npz_bomb(2**16, zipfile.ZIP_BZIP2), "npz"),
        ("npz lying directory", hostile_files.npz_lying_directory(2**20), "npz"),
        ("npy claiming 10^12 values", hostile_files.npy_claiming((10**6, 10**6)), "npy"),
        ("pickled npy", hostile_files.npy_pickled(), "npy"),
        ("plain pickle", hostile_files.pickle_bytes(), "npy"),
        ("sparse npz 2^40 rows", hostile_files.sparse_npz_shape((2**40, 3)), "npz"),
        ("mtx 2^31 columns", hostile_files.mtx_claiming(4, 2**31, 1), "mtx"),
        ("mtx 10^9 entries", hostile_files.mtx_claiming(4, 3, 10**9), "mtx"),
        ("mtx array 2^20 x 2^20", hostile_files.mtx_claiming(2**20, 2**20, None), "mtx"),
        ("svmlight index 2e9", b"1 2000000000:1\n", "svmlight"),
        ("svmlight negative index", b"1 -3:1\n-1 1:1\n", "svmlight"),
        ("svmlight index 0 one-based", b"1 0:1 2:1\n", "svmlight"),
        ("svmlight junk", b"1 a:b c\n", "svmlight"),
        ("parquet bomb 256 MiB", parquet, "parquet"),
        ("feather bomb 256 MiB", feather, "feather"),
        ("csv with text", b"a,b,c\n1,2,x\n", "csv"),
        ("csv ragged", b"a,b,c\n1,2\n3,4,5,6\n", "csv"),
        ("random bytes", random.Random(7).randbytes(4096), None),
        ("truncated npy", npy[:-5], "npy"),
        ("truncated npz", hostile_files.npz_bomb(64)[:-30], "npz"),
        ("NaN in npy", _npy(nan), "npy"),
        ("npy declared csv", npy, "csv"),
        ("npy declared parquet", npy, "parquet"),
        ("npy declared feather", npy, "feather"),
        ("empty file", b"", None),
    ]


_MEDIA = {"npy": "application/x-npy", "npz": "application/x-npz", "csv": "text/csv",
          "parquet": "application/vnd.apache.parquet", "svmlight": "application/x-svmlight",
          "mtx": "text/x-matrix-market", "feather": "application/vnd.apache.arrow.file",
          None: "application/octet-stream"}


def data_cases(rng: random.Random, count: int) -> list[Case]:
    specs = base_specs()
    payloads = hostile_payloads()
    cases = []
    for _ in range(count):
        which, location = rng.choice(DATA_POSITIONS)
        name, payload, kind = rng.choice(payloads)
        reference: dict[str, Any] = {"uri": data_uri(payload, _MEDIA[kind])}
        if kind is not None and rng.random() < 0.5:
            reference["format"] = kind
        copied = copy.deepcopy(specs[which])
        if location[-1] == "features" and kind == "svmlight":
            copied["objective"]["data"].pop("labels")
        target = copied
        for step in location[:-1]:
            target = target[step]
        target[location[-1]] = reference
        cases.append(_spec_case("data", f"{name} at {_dotted(location)} ({which})",
                                json.dumps(copied).encode(), rng))
    return cases


def body_cases(rng: random.Random, count: int) -> list[Case]:
    text = json.dumps(base_specs()["quadratic"]).encode()
    bodies = [("truncated", lambda: text[:rng.randrange(1, len(text))]),
              ("invalid UTF-8", lambda: text.replace(b'"seed"', b'"se\xffed"')),
              ("byte-order mark", lambda: b"\xef\xbb\xbf" + text),
              ("UTF-16", lambda: text.decode().encode("utf-16")),
              ("top-level scalar", lambda: rng.choice([b"1", b'"spec"', b"null", b"[]"])),
              ("empty", lambda: b""),
              ("duplicate keys", lambda: text.replace(b'"dimension": 4',
                                                      b'"dimension": 4, "dimension": "x"')),
              ("trailing garbage", lambda: text + b"}}"),
              ("NUL bytes", lambda: text.replace(b'"seed"', b'"se\\u0000ed"')),
              ("random bytes", lambda: rng.randbytes(rng.randrange(1, 2000)))]
    cases = []
    for _ in range(count):
        name, make = rng.choice(bodies)
        cases.append(_spec_case("body", name, make(), rng))
    return cases


def media_cases(rng: random.Random, count: int) -> list[Case]:
    text = json.dumps(base_specs()["quadratic"]).encode()
    return [Case("media", f"Content-Type {media}", "POST",
                 rng.choice(["/v1/validate", "/v1/jobs"]), text, media)
            for media in (rng.choice(MEDIA_TYPES) for _ in range(count))]


def http_cases(rng: random.Random, count: int) -> list[Case]:
    text = json.dumps(base_specs()["quadratic"]).encode()
    requests = [
        lambda: Case("http", "PUT validate", "PUT", "/v1/validate", text),
        lambda: Case("http", "PATCH jobs", "PATCH", "/v1/jobs", text),
        lambda: Case("http", "DELETE jobs", "DELETE", "/v1/jobs", None),
        lambda: Case("http", "long job id", "GET", "/v1/jobs/" + "a" * 5000, None),
        lambda: Case("http", "job id with NUL", "GET", "/v1/jobs/%00abc", None),
        lambda: Case("http", "job id traversal", "GET", "/v1/jobs/..%2F..%2Fetc", None),
        lambda: Case("http", "offset huge", "GET", f"/v1/jobs?offset={10**30}", None),
        lambda: Case("http", "limit negative", "GET", "/v1/jobs?limit=-5", None),
        lambda: Case("http", "status bogus", "GET", "/v1/jobs?status=%F0%9F%92%A9", None),
        lambda: Case("http", "vector bogus", "GET", "/v1/jobs/x/solution.npy?vector=z", None),
        lambda: Case("http", "Last-Event-ID out of range", "GET", "/v1/jobs/x/events",
                     headers={"Last-Event-ID": "18446744073709551616-0"}),
        lambda: Case("http", "Idempotency-Key huge", "POST", "/v1/jobs", text,
                     headers={"Idempotency-Key": "k" * 5000}),
    ]
    return [rng.choice(requests)() for _ in range(count)]


#: Family -> (builder, share of the corpus).
FAMILIES: dict[str, tuple[Callable[[random.Random, int], list[Case]], float]] = {
    "value": (value_cases, 0.34), "shape": (shape_cases, 0.08), "index": (index_cases, 0.1),
    "data": (data_cases, 0.3), "body": (body_cases, 0.08), "media": (media_cases, 0.05),
    "http": (http_cases, 0.05)}


def corpus(size: int, seed: int = 0) -> list[Case]:
    """``size`` cases (at least one of each family), the same for the same seed."""
    rng = random.Random(seed)
    cases = []
    for builder, share in FAMILIES.values():
        cases += builder(rng, max(1, round(share * size)))
    rng.shuffle(cases)
    return cases


def _at(value: Any, location: tuple) -> Any:
    for step in location:
        value = value[step]
    return value


def _dotted(location: tuple) -> str:
    return ".".join(str(step) for step in location)
