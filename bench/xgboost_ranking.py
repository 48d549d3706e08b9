"""XGBoost's learning to rank on the lattice pairs' raw inputs, on a Dask cluster: the model a
user with monotone ranking data on a cluster would train today, which :mod:`bench.scale_out`
measures beside LightTouch on the same pairs and the same ``LocalCluster``.

XGBoost is given the D raw inputs of each pair, not the lattice's interpolation weights.
Each pair ``(x+, x-)`` is one query group of two items, x+ with relevance 1 and x- with
relevance 0 (``qid``), trained with ``objective="rank:pairwise"`` and every input
constrained increasing: the truth of :func:`worker.datasets.lattice.make_truth` increases in
each. The groups are one npy table of features, x+ and x- of pair i in rows 2i and 2i + 1;
each worker reads row ranges of whole groups from it, and a row's query and relevance
follow from its index.

Both models are scored on held-out pairs of the same generator with another seed (the
truth depends only on its own seed, :func:`worker.datasets.lattice.make_ranking_problem`):
the fraction of pairs where score(x+) > score(x-).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from worker.datasets.lattice import DEFAULT_NOISE, make_truth, sample_pairs
from worker.datasets.simplex import simplex_interpolation

#: the seed of the training pairs (``make_ranking_problem``'s) and of the held-out pairs
TRAINING_SEED = 0
HELD_OUT_SEED = 1
HELD_OUT_PAIRS = 100_000
ROUNDS = 200
#: rows of the groups table per Dask partition (even: a partition holds whole groups)
PARTITION_ROWS = 2**18


def parameters(dims: int) -> dict:
    """The booster's parameters: a user's usual settings, every input increasing."""
    return {"objective": "rank:pairwise", "tree_method": "hist", "max_depth": 6, "eta": 0.1,
            "seed": 0, "monotone_constraints": "(" + ",".join(["1"] * dims) + ")"}


def raw_pairs(n_pairs: int, dims: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The raw inputs of the pairs ``make_ranking_problem(n_pairs, dims, seed=seed)``
    interpolates (its default noise and truth seed).

    Returns
    -------
    x_positive, x_negative : ndarray, shape (n_pairs, dims)
    """
    return sample_pairs(n_pairs, make_truth(dims, 0), DEFAULT_NOISE,
                        np.random.default_rng(seed))


def query_groups(x_positive: np.ndarray,
                 x_negative: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs as query groups of two items: x+ of pair i in row 2i, x- in row 2i + 1.

    Parameters
    ----------
    x_positive, x_negative : ndarray, shape (n, D)

    Returns
    -------
    features : ndarray, shape (2n, D)
    relevance : ndarray of float32, shape (2n,)
        1 for x+, 0 for x-.
    qid : ndarray of int64, shape (2n,)
        The pair's index, ascending.
    """
    if x_positive.shape != x_negative.shape:
        raise ValueError(f"x_positive has shape {x_positive.shape}, x_negative "
                         f"{x_negative.shape}: a pair needs one row of each")
    features = np.empty((2 * x_positive.shape[0], x_positive.shape[1]), x_positive.dtype)
    features[0::2], features[1::2] = x_positive, x_negative
    return features, *_group_columns(0, features.shape[0])


def _group_columns(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Relevance and qid of the groups table's rows ``start:stop`` (``start`` even)."""
    rows = np.arange(start, stop)
    return (1 - rows % 2).astype(np.float32), rows // 2


def write_groups(path: Path, dims: int, n_pairs: int, scale: int) -> Path:
    """The training pairs' query groups as a float32 npy table of ``scale`` copies, written
    once: the rows :data:`TRAINING_SEED`'s pairs of the LightTouch tables hold."""
    if not path.exists():
        features, _, _ = query_groups(*raw_pairs(n_pairs, dims, TRAINING_SEED))
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.tile(features.astype(np.float32), (scale, 1)))
    return path


def _read_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of the npy table at ``path`` (read on a worker)."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def _read_columns(start: int, stop: int, which: int) -> np.ndarray:
    """Relevance (``which`` 0) or qid (1) of rows ``start:stop``, made on a worker."""
    return _group_columns(start, stop)[which]


def partitions(path: Path):
    """The groups table as Dask arrays of :data:`PARTITION_ROWS` rows each, every partition
    read by the worker that holds it.

    Returns
    -------
    features : dask.array.Array, shape (2n, D)
    relevance, qid : dask.array.Array, shape (2n,)
    """
    import dask
    import dask.array as da

    rows, dims = np.load(path, mmap_mode="r").shape
    ranges = [(start, min(start + PARTITION_ROWS, rows))
              for start in range(0, rows, PARTITION_ROWS)]
    features = da.concatenate([
        da.from_delayed(dask.delayed(_read_rows)(str(path), start, stop),
                        shape=(stop - start, dims), dtype=np.float32)
        for start, stop in ranges])
    relevance, qid = (da.concatenate([
        da.from_delayed(dask.delayed(_read_columns)(start, stop, which),
                        shape=(stop - start,), dtype=dtype)
        for start, stop in ranges]) for which, dtype in ((0, np.float32), (1, np.int64)))
    return features, relevance, qid


def train(client, path: Path, dims: int):
    """Train the ranker on the cluster ``client`` talks to; returns the ``xgboost.Booster``."""
    from xgboost import dask as dxgb

    features, relevance, qid = partitions(path)
    matrix = dxgb.DaskQuantileDMatrix(client, features, relevance, qid=qid)
    output = dxgb.train(client, parameters(dims), matrix, num_boost_round=ROUNDS,
                        verbose_eval=False)
    return output["booster"]


def pairwise_accuracy(score_positive: np.ndarray, score_negative: np.ndarray) -> dict:
    """The fraction of pairs with score(x+) > score(x-), and of ties (counted wrong).

    Parameters
    ----------
    score_positive, score_negative : ndarray, shape (n,)
    """
    return {"heldout_accuracy": float(np.mean(score_positive > score_negative)),
            "heldout_ties": float(np.mean(score_positive == score_negative))}


def held_out(dims: int) -> tuple[np.ndarray, np.ndarray]:
    """The held-out pairs' raw inputs, shape (:data:`HELD_OUT_PAIRS`, dims) each."""
    return raw_pairs(HELD_OUT_PAIRS, dims, HELD_OUT_SEED)


def xgboost_accuracy(model_path: Path, dims: int) -> dict:
    """Held-out accuracy of the booster saved at ``model_path``."""
    import xgboost

    booster = xgboost.Booster(model_file=str(model_path))
    x_positive, x_negative = held_out(dims)
    return pairwise_accuracy(
        *(booster.inplace_predict(x.astype(np.float32)) for x in (x_positive, x_negative)))


def lattice_accuracy(solution: list[float], dims: int) -> dict:
    """Held-out accuracy of the lattice parameters ``solution`` (shape (2**dims,)): a pair's
    score is its interpolation weights times them."""
    w = np.asarray(solution)
    x_positive, x_negative = held_out(dims)
    return pairwise_accuracy(simplex_interpolation(x_positive) @ w,
                             simplex_interpolation(x_negative) @ w)


def truth_accuracy(dims: int) -> dict:
    """Held-out accuracy of the noiseless truth itself: the ceiling the pairs' noise leaves."""
    truth = make_truth(dims, 0)
    return pairwise_accuracy(*(truth(x) for x in held_out(dims)))
