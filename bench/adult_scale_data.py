"""UCI Adult at K times its size, for bench/adult_scale.py: the 80% fit split of
:func:`worker.datasets.adult.validation_split` drawn with replacement, with noise on the raw
numeric columns before the encoding, written as files a partitioned solve reads.

Scale K holds K x 32,561 rows (the training file's row count, so 100x passes 3 million),
drawn uniformly with replacement from the fit split's 26,049 raw rows, seeded by
(``seed``, K). Before a drawn row is encoded (by :mod:`worker.datasets.adult`'s own
encoder, with the bins and categories fitted on the training file as :func:`load_adult`
fits them), its numeric columns move:

* age, education-num and hours-per-week by a normal draw of standard deviation
  :data:`NOISE_SD` (in the column's units) rounded to a whole number, clipped to the fit
  split's range: the values stay whole, and a row at a bin's cut point changes bin when it
  moves across it;
* a nonzero capital-gain or capital-loss by the factor exp(N(0, :data:`CAPITAL_NOISE`^2)),
  rounded; zero stays zero (the zero bin is most rows);
* the categorical columns, the label and the groups stay the row's own.

Files under ``<cache>/x{K}/``, written once (``generation.json`` last, with the seconds and
bytes): ``features.svm`` (svmlight, zero-based indices, the +-1 label in the file),
``{group}.npy`` (0/1 float64, one per group, row-aligned), ``spec.json`` (the spec of
:func:`worker.datasets.adult.adult_spec` with its data replaced by these files'
``file://`` URIs), and ``distinct.npz``: each distinct (features, label, groups) row once,
bit-packed, with the number of times it occurs, from which the training rates of the K x
rows are exact without reading the svmlight again.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from worker.datasets.adult import (
    CAPITAL,
    CATEGORICAL,
    CONTINUOUS,
    DATA,
    GROUPS,
    Split,
    _read,
    _split,
    adult_spec,
    fit_bins,
    load_adult,
    validation_rows,
)

#: Standard deviation of the rounded noise on age, education-num and hours-per-week.
NOISE_SD = 0.5
#: Standard deviation of the log-normal factor on nonzero capital values.
CAPITAL_NOISE = 0.05
#: Rows encoded and written at a time.
CHUNK_ROWS = 2**17


class Source:
    """The fit split's raw rows and their encoding (the training file's bins and
    categories), and the fit and validation splits and the test file as
    :func:`load_adult` and :func:`validation_split` give them."""

    def __init__(self) -> None:
        raw = _read(DATA / "adult.data")
        fit_rows, held_rows = validation_rows(len(raw))
        self.file_rows = len(raw)
        self.raw = [raw[i] for i in fit_rows]
        self.columns = {name: sorted({row[name] for row in raw} - {"?"})
                        for name in CATEGORICAL}
        self.bins = fit_bins(raw)
        train, self.test = load_adult()
        self.fit, self.validation = train.rows(fit_rows), train.rows(held_rows)
        self.numeric = {name: np.array([float(row[name]) for row in self.raw])
                        for name in (*CONTINUOUS, *CAPITAL)}

    def noisy(self, rng: np.random.Generator, index: np.ndarray) -> Split:
        """The fit rows at ``index``, their numeric columns moved (module notes), encoded."""
        values = {}
        for name in CONTINUOUS:
            column = self.numeric[name]
            moved = column[index] + np.rint(rng.normal(0.0, NOISE_SD, index.size))
            values[name] = np.clip(moved, column.min(), column.max())
        for name in CAPITAL:
            factor = np.exp(rng.normal(0.0, CAPITAL_NOISE, index.size))
            values[name] = np.rint(self.numeric[name][index] * factor)
        names = list(values)
        rows = [dict(self.raw[i], **dict(zip(names, moved, strict=True)))
                for i, *moved in zip(index.tolist(), *(values[n].tolist() for n in names),
                                     strict=True)]
        return _split(rows, self.columns, self.bins)


def row_keys(split: Split) -> np.ndarray:
    """Each row's binary features, label and groups bit-packed into one void scalar (n,)."""
    bits = np.hstack([split.features.toarray() > 0, split.labels[:, None] > 0,
                      np.column_stack([split.groups[name] > 0 for name in GROUPS])])
    packed = np.packbits(bits, axis=1)
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


def counted(keys: list[np.ndarray], counts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys of all ``keys`` arrays and their summed ``counts``."""
    distinct, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    return distinct, np.bincount(inverse, weights=np.concatenate(counts)).astype(np.int64)


def distinct_rows(directory: Path) -> tuple[Split, np.ndarray]:
    """(each distinct row of ``directory``'s K x rows once, how many times it occurs (r,))."""
    stored = np.load(directory / "distinct.npz")
    width = int(stored["width"])
    bits = np.unpackbits(stored["keys"], axis=1)
    groups = {name: bits[:, width + 1 + k].astype(np.float64) for k, name in enumerate(GROUPS)}
    return Split(sp.csr_matrix(bits[:, :width].astype(np.float64)),
                 np.where(bits[:, width] > 0, 1.0, -1.0), groups), stored["counts"]


def training_rows(cache: Path, scale: int) -> Split:
    """The K x training rows of ``cache/x{scale}``, each distinct row repeated as often as it
    was drawn."""
    distinct, counts = distinct_rows(cache / f"x{scale}")
    return distinct.rows(np.repeat(np.arange(counts.size), counts))


def write_rows(source: Source, directory: Path, rows: int, rng: np.random.Generator) -> dict:
    """``rows`` noisy draws of the fit split into ``directory``'s svmlight and group files,
    and their distinct rows; the counts of rows written and rows whose encoding moved."""
    from sklearn.datasets import dump_svmlight_file

    groups = {name: np.lib.format.open_memmap(directory / f"{name}.npy", mode="w+",
                                              dtype=np.float64, shape=(rows,))
              for name in GROUPS}
    keys, counts, moved = [], [], 0
    with (directory / "features.svm").open("wb") as handle:
        for start in range(0, rows, CHUNK_ROWS):
            index = rng.integers(0, len(source.raw), size=min(CHUNK_ROWS, rows - start))
            chunk = source.noisy(rng, index)
            dump_svmlight_file(chunk.features, chunk.labels, handle, zero_based=True)
            for name, vector in chunk.groups.items():
                groups[name][start:start + index.size] = vector
            moved += int(np.count_nonzero(
                abs(chunk.features - source.fit.features[index]).sum(axis=1)))
            chunk_keys, inverse = np.unique(row_keys(chunk), return_inverse=True)
            keys.append(chunk_keys)
            counts.append(np.bincount(inverse))
    for vector in groups.values():
        vector.flush()
    distinct, occurrences = counted(keys, counts)
    np.savez(directory / "distinct.npz", keys=distinct.view(np.uint8).reshape(distinct.size, -1),
             counts=occurrences, width=source.fit.features.shape[1])
    return {"rows": rows, "distinct_rows": int(distinct.size), "rows_rebinned": moved}


def scaled_spec(template: dict, directory: Path) -> dict:
    """``template`` (an :func:`adult_spec`) with its data the svmlight and group files of
    ``directory``, by absolute ``file://`` URIs."""
    spec = copy.deepcopy(template)

    def uri(name: str) -> str:
        return (directory / name).resolve().as_uri()

    spec["objective"]["data"] = {
        "features": {"uri": uri("features.svm"), "format": "svmlight", "zero_based": True},
        "groups": {name: {"uri": uri(f"{name}.npy"), "format": "npy"} for name in GROUPS}}
    return spec


def generate(source: Source, cache: Path, scale: int, template: dict, seed: int = 0) -> dict:
    """Scale ``scale``'s files under ``cache/x{scale}`` (module notes), written unless
    ``generation.json`` is there; what that file records (rows, seconds, bytes)."""
    directory = cache / f"x{scale}"
    record_path = directory / "generation.json"
    if record_path.exists():
        return json.loads(record_path.read_text())
    directory.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    written = write_rows(source, directory, scale * source.file_rows,
                         np.random.default_rng([seed, scale]))
    seconds = time.perf_counter() - began
    (directory / "spec.json").write_text(json.dumps(scaled_spec(template, directory), indent=1))
    record = {"scale": scale, "seed": seed, **written, "seconds": seconds,
              "svmlight_bytes": (directory / "features.svm").stat().st_size,
              "group_bytes": sum((directory / f"{name}.npy").stat().st_size
                                 for name in GROUPS),
              "noise_sd": NOISE_SD, "capital_noise": CAPITAL_NOISE}
    record_path.write_text(json.dumps(record, indent=1) + "\n")
    return record


def template_spec(source: Source, cache: Path, iterations: int, seed: int) -> dict:
    """The spec of :func:`adult_spec` on the fit split as is (it and its files under
    ``cache/fit``): proxy-Lagrangian, ``iterations`` and ``seed``, no time limit before
    them."""
    spec = adult_spec(source.fit, cache / "fit", algorithm="proxy_lagrangian",
                      iterations=iterations, seed=seed, time_limit_s=86_400)
    (cache / "fit" / "spec.json").write_text(json.dumps(spec, indent=1))
    return spec
