"""Load time and peak memory of LightTouch's data loader against the libraries directly.

Generates one sparse data set (``--features`` columns, ``--density`` non-zeros, four
significant digits per value) as an svmlight file of about ``--size-mb`` megabytes, and the
same matrix as a dense-column parquet file and an uncompressed scipy ``.npz``. Each
measurement runs in a fresh Python process after its imports: the process resets its peak
resident set (Linux ``/proc/self/clear_refs``), loads, and reports the peak (``VmHWM``)
minus the resident set before the load as the memory the load needed.

======================  ====================================================================
measurement             what runs
======================  ====================================================================
svmlight/sklearn        ``sklearn.datasets.load_svmlight_file``
svmlight/lighttouch     ``worker.data.read_examples`` (features and labels), cache off
svmlight/cached         the same with the parsed-data cache filled by an earlier process
parquet/pyarrow         ``pyarrow.parquet.read_table``, then the columns as one 2-D array
parquet/lighttouch      ``worker.data.read_matrix`` (CSR, as the density is low), cache off
npz/scipy               ``scipy.sparse.load_npz``
npz/lighttouch          ``worker.data.read_matrix``, cache off
======================  ====================================================================

Usage::

    python bench/data_load.py                    # 1 GB svmlight; JSON + PNG in bench/results
    python bench/data_load.py --size-mb 64       # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from worker.settings import data_settings

RESULTS = Path(__file__).resolve().parent / "results"
MEASUREMENTS = ("svmlight/sklearn", "svmlight/lighttouch", "svmlight/cached",
                "parquet/pyarrow", "parquet/lighttouch", "npz/scipy", "npz/lighttouch")
ROWS_PER_BLOCK = 100_000


def generate(directory: Path, size_mb: int, features: int, density: float,
             seed: int) -> dict[str, Path]:
    """Write ``data.svm`` (until it reaches ``size_mb``), ``data.parquet`` and ``data.npz``."""
    rng = np.random.default_rng(seed)
    levels = np.round(rng.uniform(-1, 1, 4096), 4)
    tokens = [[f"{j + 1}:{value:.4g}".encode() for value in levels] for j in range(features)]
    paths = {kind: directory / f"data.{kind}" for kind in ("svm", "parquet", "npz")}
    blocks = []
    written = 0
    with open(paths["svm"], "wb") as out:
        while written < size_mb * 2**20:
            block = sp.random(ROWS_PER_BLOCK, features, density=density, format="csr",
                              random_state=rng, data_rvs=lambda n: rng.integers(0, 4096, n))
            labels = rng.integers(0, 2, ROWS_PER_BLOCK) * 2 - 1
            lines = [b"%d " % label + b" ".join(
                tokens[j][int(v)] for j, v in zip(block.indices[start:end],
                                                  block.data[start:end], strict=True))
                for label, start, end in zip(labels, block.indptr[:-1], block.indptr[1:],
                                             strict=True)]
            written += out.write(b"\n".join(lines) + b"\n")
            block.data = levels[block.data.astype(np.int64)]
            blocks.append(block)
    matrix = sp.vstack(blocks, format="csr")
    sp.save_npz(paths["npz"], matrix, compressed=False)
    schema = pa.schema([(f"f{j}", pa.float64()) for j in range(features)])
    with pq.ParquetWriter(paths["parquet"], schema) as writer:
        for block in blocks:
            dense = block.toarray()
            writer.write_table(pa.table([dense[:, j] for j in range(features)], schema=schema))
    return paths


def measure(kind: str, path: Path, cache_dir: Path) -> dict:
    """Run one measurement in this process; returns seconds, memory and the shape read."""
    os.environ["LIGHTTOUCH_DATA_CACHE_DIR"] = str(cache_dir)
    os.environ["LIGHTTOUCH_DATA_CACHE_BYTES"] = str(0 if kind.endswith("lighttouch")
                                                    else 64 * 2**30)
    os.environ["LIGHTTOUCH_MAX_DATA_BYTES"] = str(64 * 2**30)
    load = _loader(kind, path)
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
    before = _memory_kb("VmRSS")
    started = time.perf_counter()
    result = load()
    seconds = time.perf_counter() - started
    return {"measurement": kind, "seconds": seconds,
            "peak_extra_mb": (_memory_kb("VmHWM") - before) / 2**10,
            "shape": list(result.shape)}


def _loader(kind: str, path: Path):
    """A function that performs the load ``kind`` names (imports done beforehand)."""
    from sklearn.datasets import load_svmlight_file

    from worker.data.read import read_examples, read_matrix
    from worker.data.refs import DataRef

    ref = DataRef(uri=path.as_uri())
    roots = [path.parent]
    loaders = {
        "svmlight/sklearn": lambda: load_svmlight_file(str(path))[0],
        "svmlight/lighttouch": lambda: read_examples(ref, None, "data", roots=roots,
                                                     settings=data_settings())[0],
        "svmlight/cached": lambda: read_examples(ref, None, "data", roots=roots,
                                                 settings=data_settings())[0],
        "parquet/pyarrow": lambda: np.column_stack(
            [column.to_numpy() for column in pq.read_table(path).columns]),
        "parquet/lighttouch": lambda: read_matrix(ref, "data", roots=roots,
                                                  settings=data_settings()),
        "npz/scipy": lambda: sp.load_npz(path),
        "npz/lighttouch": lambda: read_matrix(ref, "data", roots=roots, settings=data_settings()),
    }
    return loaders[kind]


def _memory_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status (VmRSS now, VmHWM peak), kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def run_in_subprocess(kind: str, path: Path, cache_dir: Path) -> dict:
    """One measurement in a fresh interpreter."""
    command = [sys.executable, __file__, "--measure", kind, "--file", str(path),
               "--cache-dir", str(cache_dir)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def plot(results: list[dict], target: Path) -> None:
    """Seconds and peak memory per measurement, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["measurement"] for r in results]
    colors = ["tab:orange" if "lighttouch" in n or "cached" in n else "tab:blue"
              for n in names]
    figure, (time_axis, memory_axis) = plt.subplots(1, 2, figsize=(12, 4.5))
    for axis, key, label in ((time_axis, "seconds", "load time (s)"),
                             (memory_axis, "peak_extra_mb", "peak extra memory (MB)")):
        axis.barh(names, [r[key] for r in results], color=colors)
        axis.set_xlabel(label)
        axis.invert_yaxis()
        for y, r in enumerate(results):
            axis.annotate(f"{r[key]:.2f}" if key == "seconds" else f"{r[key]:.0f}",
                          (r[key], y), va="center", fontsize=8)
    memory_axis.set_yticklabels([])
    figure.suptitle("LightTouch data loading (orange) vs the libraries directly (blue)")
    figure.tight_layout()
    figure.savefig(target, dpi=120)


def main() -> None:
    """Generate, measure each loader in its own process, write JSON and a PNG."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--density", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--measure", choices=MEASUREMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.file, args.cache_dir)))
        return
    with tempfile.TemporaryDirectory(prefix="lighttouch-bench-") as scratch:
        directory = Path(scratch)
        started = time.perf_counter()
        paths = generate(directory, args.size_mb, args.features, args.density, args.seed)
        generated_s = time.perf_counter() - started
        cache_dir = directory / "cache"
        run_in_subprocess("svmlight/cached", paths["svm"], cache_dir)  # fills the cache
        files = {"svmlight": paths["svm"], "parquet": paths["parquet"], "npz": paths["npz"]}
        results = [run_in_subprocess(kind, files[kind.split("/")[0]], cache_dir)
                   for kind in MEASUREMENTS]
        sizes_mb = {name: path.stat().st_size / 2**20 for name, path in files.items()}
    by_name = {r["measurement"]: r for r in results}
    summary = {
        "svmlight_time_ratio": by_name["svmlight/lighttouch"]["seconds"]
        / by_name["svmlight/sklearn"]["seconds"],
        "svmlight_memory_ratio": by_name["svmlight/lighttouch"]["peak_extra_mb"]
        / by_name["svmlight/sklearn"]["peak_extra_mb"],
        "cache_speedup": by_name["svmlight/lighttouch"]["seconds"]
        / by_name["svmlight/cached"]["seconds"],
        "parquet_time_ratio": by_name["parquet/lighttouch"]["seconds"]
        / by_name["parquet/pyarrow"]["seconds"],
        "npz_time_ratio": by_name["npz/lighttouch"]["seconds"]
        / by_name["npz/scipy"]["seconds"],
    }
    report = {"size_mb": sizes_mb, "features": args.features, "density": args.density,
              "generate_s": generated_s, "cpus": os.cpu_count(), "results": results,
              "summary": summary}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "data_load.json").write_text(json.dumps(report, indent=2) + "\n")
    plot(results, args.out / "data_load.png")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
