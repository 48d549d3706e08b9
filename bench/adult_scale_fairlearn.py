"""fairlearn's reductions beside the Adult scale bench (bench/adult_scale.py): what a fairness
user would run instead on the same K x training rows, fairlearn's ``ExponentiatedGradient``
(Agarwal et al., 2018) over ``LogisticRegression`` with
``TruePositiveRateParity(ratio_bound=0.95)``, as :func:`bench.fairlearn_compare.fit_fairlearn`
configures it (its defaults: eps 0.01, 50 iterations; ``LogisticRegression(max_iter=1000)``).

The rows: the scale's svmlight file read by scikit-learn's ``load_svmlight_file`` and made
dense (fairlearn's input checks take no sparse matrix), labels 0/1, and from the group files
two sensitive columns, sex (female / male) and race (black / white / other). fairlearn joins
several sensitive columns into one feature, their intersections (six groups), and holds each
group's TPR within the ratio 0.95 of TPR(all) both ways. Each of the bench's four groups is a
union of these cells and its TPR their TPRs weighted by their positives, so fairlearn's
constraints imply the bench's four (TPR(G) >= 0.95 TPR(all)) and are stricter: they also hold
the cells (female and black, ...), the other races, and each TPR from above.

Each fit runs in its own process (this module as a script), which writes its seconds (reading
the files, fitting) and the fitted model; the bench reads the process's own peak memory
(``VmHWM``) while it runs (:func:`bench.raw_pairs_cluster.peak_while_running`, the key
``driver_peak_bytes`` as the bench's runs name it) and ends it past ``timeout`` seconds. The
bench then scores the model as :mod:`bench.fairlearn_compare` does, expected over the
randomized classifier's weights (``_pmf_predict``), by :func:`bench.adult_tuning.scores` on
the K x training rows, the validation split and the test file. ``wall_s`` is the reading and
the fit; ``process_wall_s`` adds the process's start (its imports) and exit.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from bench.adult_tuning import scores
from bench.raw_pairs_cluster import peak_while_running
from bench.scale_out import commit, own_peak
from worker.datasets.adult import Split

ROOT = Path(__file__).resolve().parents[1]
LABEL = "fairlearn ExponentiatedGradient"
#: Rows scored at a time (the model takes dense rows).
SCORE_ROWS = 2**17


def sensitive_columns(groups: dict[str, np.ndarray]) -> np.ndarray:
    """Sex and race (n, 2) strings of the 0/1 group vectors (each (n,)) ``female``, ``black``
    and ``white``: female / male, and black / white / other."""
    sex = np.where(groups["female"] > 0, "female", "male")
    race = np.where(groups["black"] > 0, "black",
                    np.where(groups["white"] > 0, "white", "other"))
    return np.column_stack([sex, race])


def read_rows(directory: Path, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dense features (n, width), 0/1 labels (n,), sensitive columns (n, 2)) of the
    svmlight and group files in ``directory``."""
    from sklearn.datasets import load_svmlight_file

    features, labels = load_svmlight_file(str(directory / "features.svm"), n_features=width,
                                          zero_based=True)
    groups = {name: np.load(directory / f"{name}.npy") for name in ("female", "black", "white")}
    return features.toarray(), (labels > 0).astype(int), sensitive_columns(groups)


def fit_here(directory: Path, width: int, out: Path) -> None:
    """Read ``directory``'s rows and fit fairlearn on them in this process; write the
    seconds to ``out`` (json) and the model beside it (``.pkl``)."""
    from bench.fairlearn_compare import fit_fairlearn

    import_peak = own_peak()
    began = time.perf_counter()
    features, labels, sensitive = read_rows(directory, width)
    load_s = time.perf_counter() - began
    fit_s, _, model = fit_fairlearn("TruePositiveRateParity", {"ratio_bound": 0.95},
                                    features, labels, sensitive)
    out.with_suffix(".pkl").write_bytes(pickle.dumps(model))
    out.write_text(json.dumps({"load_s": load_s, "fit_s": fit_s, "wall_s": load_s + fit_s,
                               "rows": int(labels.size), "import_peak_bytes": import_peak,
                               "fit_peak_bytes": own_peak()}))


def positive(model, split: Split) -> np.ndarray:
    """Each row's probability (n,) of a positive under fairlearn's randomized classifier."""
    return np.concatenate([model._pmf_predict(split.features[start:start + SCORE_ROWS]
                                              .toarray())[:, 1]
                           for start in range(0, split.labels.size, SCORE_ROWS)])


def run_fairlearn(directory: Path, width: int, splits: dict, timeout: float) -> dict:
    """One fit on ``directory``'s rows in its own process, ended past ``timeout`` seconds,
    and its scores on each of ``splits`` (name -> Split) (module notes)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "fit.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        began = time.perf_counter()
        with tempfile.TemporaryFile("w+") as errors:
            child = subprocess.Popen([sys.executable, "-m", "bench.adult_scale_fairlearn",
                                      str(directory), str(width), str(out)], env=env,
                                     cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors,
                                     text=True)
            ending = threading.Timer(timeout, child.kill)
            ending.start()
            peak = peak_while_running(child)
            ending.cancel()
            errors.seek(0)
            message = errors.read()
        row = {"driver_peak_bytes": peak, "process_wall_s": time.perf_counter() - began}
        if child.returncode != 0:
            return row | {"wall_s": row["process_wall_s"],
                          "error": f"ended after {timeout:g} s" if child.returncode < 0
                          else message[-3000:]}
        model = pickle.loads(out.with_suffix(".pkl").read_bytes())
        row |= json.loads(out.read_text())
    weights = np.asarray(model.weights_)
    return row | {"support": int(np.count_nonzero(weights)), "mixture_weights": weights.tolist(),
                  **{name: scores(split, positive(model, split))
                     for name, split in splits.items()}}


def run_scales(scales: list[int], cache: Path, splits_of, timeout: float, path: Path) -> dict:
    """One fit per scale of ``cache/x{K}`` (``splits_of(K)``: its splits to score), the
    record (rows of other scales kept from ``path``) written to ``path`` after each."""
    kept = json.loads(path.read_text())["runs"] if path.exists() else []
    record = {"runs": [run for run in kept if run["scale"] not in scales]}
    for scale in scales:
        splits = splits_of(scale)
        width = splits["train"].features.shape[1]
        row = {"scale": scale, "label": LABEL, "commit": commit(),
               "loadavg_before": os.getloadavg()} | run_fairlearn(
                   cache / f"x{scale}", width, splits, timeout)
        record["runs"].append(row)
        print(json.dumps(row)[:2000], flush=True)
        path.write_text(json.dumps(record, indent=1) + "\n")
    return record


if __name__ == "__main__":
    fit_here(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
