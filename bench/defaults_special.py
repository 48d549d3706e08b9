"""The rows of ``defaults_matrix.py`` that are not one convex objective over arrays: a robust
``max_of``, rate constraints on Adult (against fairlearn), an MLP (against scikit-learn) and a
file-backed job (SVRG OL, partitioned). Each ``run_*`` solves its spec with LightTouch and
the peer in the same process and returns the row's numbers."""

from __future__ import annotations

import time
from pathlib import Path

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from defaults_rows import classification, ref
from fairlearn.reductions import ExponentiatedGradient, TruePositiveRateParity
from sklearn.datasets import dump_svmlight_file, load_digits, load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from worker import solve
from worker.datasets.adult import RATIO, Split, adult_spec, load_adult
from worker.mixture import Mixture

#: ``solver.time_limit_s`` for every row when set (``--time-limit``); None: pure defaults.
TIME_LIMIT: list[float | None] = [None]


def _timed_solve(spec: dict, directory: Path):
    if TIME_LIMIT[0] is not None:
        spec.setdefault("solver", {})["time_limit_s"] = TIME_LIMIT[0]
    began = time.perf_counter()
    result = solve(spec, roots=[directory])
    return result, time.perf_counter() - began


def _mixture(result) -> tuple[np.ndarray, np.ndarray]:
    weights = np.array([member.weight for member in result.mixture])
    return np.array([member.solution for member in result.mixture]), weights


def run_max_of(directory: Path, quick: bool) -> dict:
    """max of three mean logistic losses (d = 8, 600 rows each; 200 in quick mode) against
    CVXPY + Clarabel's exact min-max; quality of LightTouch's mean point."""
    rows = 200 if quick else 600
    terms, data = [], []
    for k in range(3):
        x, y = classification(rows, 8, 10 + k)
        x[:, :-1] += 0.5 * k
        data.append((x, y))
        terms.append({"type": "empirical_risk", "loss": "logistic",
                      "data": {"features": ref(directory, f"x{k}.npz", sp.csr_matrix(x)),
                               "labels": ref(directory, f"y{k}.npy", y)}})
    spec = {"spec_version": 1, "dimension": 8, "objective": {"type": "max_of", "terms": terms}}
    result, seconds = _timed_solve(spec, directory)

    def worst(w: np.ndarray) -> float:
        return max(float(np.logaddexp(0.0, -y * (x @ w)).mean()) for x, y in data)

    began = time.perf_counter()
    w = cp.Variable(8)
    cp.Problem(cp.Minimize(cp.maximum(*[cp.sum(cp.logistic(-cp.multiply(y, x @ w))) / rows
                                        for x, y in data]))).solve(solver=cp.CLARABEL)
    peer_seconds = time.perf_counter() - began
    solutions, weights = _mixture(result)
    ours = worst(weights @ solutions)
    optimum = worst(w.value)
    return {"seconds": seconds, "peer_seconds": peer_seconds, "objective": ours,
            "optimum": optimum, "method": result.algorithm, "stats": _stats(result)}


def _cells(groups: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """sex x race (black, white, other) as 0/1 vectors: the groups fairlearn's parity
    constrains when its sensitive feature is the sex x race label."""
    race = {"black": groups["black"] > 0, "white": groups["white"] > 0}
    race["other"] = ~(race["black"] | race["white"])
    return {f"{sex}_{name}": ((groups[sex] > 0) & member).astype(float)
            for sex in ("female", "male") for name, member in race.items()}


def _labels(cells: dict[str, np.ndarray]) -> np.ndarray:
    """Each example's cell name: fairlearn's sensitive feature."""
    labels = np.empty(next(iter(cells.values())).size, dtype=object)
    for name, member in cells.items():
        labels[member > 0] = name
    return labels


def _parity_spec(train: Split, directory: Path) -> dict:
    """Our defaults with exactly fairlearn's ``TruePositiveRateParity(ratio_bound=r)``: for
    every cell G, r TPR(all) <= TPR(G) <= TPR(all) / r (its "-" and "+" moments)."""
    spec = adult_spec(Split(train.features, train.labels, _cells(train.groups)), directory,
                      algorithm="auto", iterations=1)
    del spec["solver"]
    spec["constraints"] = [
        {"type": "rate", "lhs": {"metric": "true_positive_rate", "group": name}, "op": op,
         "rhs": {"metric": "true_positive_rate", "group": None, "scale": scale}}
        for name in spec["objective"]["data"]["groups"]
        for op, scale in ((">=", RATIO), ("<=", 1.0 / RATIO))]
    return spec


def _parity(split: Split, predicted: np.ndarray) -> dict:
    """TPR(G)/TPR(all) over the cells, and the largest violation of the constraint set in
    rate units (max over G of r TPR(all) - TPR(G) and TPR(G) - TPR(all)/r; <= 0 is met)."""
    positive = split.labels > 0
    overall = float(predicted[positive].mean())
    rates = [float(predicted[positive & (member > 0)].mean())
             for member in _cells(split.groups).values()]
    return {"ratio_min": min(rates) / overall, "ratio_max": max(rates) / overall,
            "max_violation": max(max(RATIO * overall - rate, rate - overall / RATIO)
                                 for rate in rates)}


def run_adult_rates(directory: Path, quick: bool) -> dict:
    """Adult under fairlearn's constraint set: ``TruePositiveRateParity(ratio_bound=0.95)``
    over sex x race (6 cells) is 0.95 TPR(all) <= TPR(G) <= TPR(all) / 0.95 for every cell G,
    12 rate constraints in our spec (hinge loss, the proxy-Lagrangian by default), against
    fairlearn's ExponentiatedGradient(LogisticRegression) given the cell labels; test errors,
    and each one's ratios and largest violation on training data (:func:`_parity`; fairlearn
    allows its own ``eps`` = 0.01 on r TPR(all) - TPR(G) and r TPR(G) - TPR(all))."""
    train, test = load_adult()
    if quick:
        train = train.rows(np.arange(0, train.labels.size, 4))
    result, seconds = _timed_solve(_parity_spec(train, directory), directory)
    solutions, weights = _mixture(result)

    def ours(split) -> np.ndarray:
        return (split.features @ solutions.T > 0).astype(float) @ weights

    began = time.perf_counter()
    peer = ExponentiatedGradient(LogisticRegression(fit_intercept=False, max_iter=1000),
                                 constraints=TruePositiveRateParity(ratio_bound=RATIO))
    peer.fit(train.features.toarray(), (train.labels > 0).astype(int),
             sensitive_features=_labels(_cells(train.groups)))
    peer_seconds = time.perf_counter() - began

    def theirs(split) -> np.ndarray:
        return peer._pmf_predict(split.features.toarray())[:, 1]

    def error(split, predicted) -> float:
        positive = split.labels > 0
        return float(np.where(positive, 1.0 - predicted, predicted).mean())

    mine, peers = _parity(train, ours(train)), _parity(train, theirs(train))
    return {"seconds": seconds, "peer_seconds": peer_seconds,
            "test_error": error(test, ours(test)), "peer_test_error": error(test, theirs(test)),
            "train_ratio_min": mine["ratio_min"], "train_ratio_max": mine["ratio_max"],
            "train_max_violation": mine["max_violation"],
            "peer_train_ratio_min": peers["ratio_min"],
            "peer_train_ratio_max": peers["ratio_max"],
            "peer_train_max_violation": peers["max_violation"],
            "constraints": len(_cells(train.groups)) * 2,
            "method": result.algorithm, "stats": _stats(result)}


def run_mlp(directory: Path, quick: bool, l2: float = 0.0) -> dict:
    """A one-hidden-layer MLP (32 ReLU units) on digits >= 5 vs < 5 (1,797 images, 70/30
    split) against scikit-learn's MLPClassifier of the same shape; test errors. With ``l2``
    the objective carries (l2/2)||theta||^2 and the peer the same penalty: its alpha
    penalizes (alpha/2n)||W||^2, so alpha = l2 n (its biases go unpenalized)."""
    digits = load_digits()
    x, y = digits.data / 16.0, np.where(digits.target >= 5, 1.0, -1.0)
    order = np.random.default_rng(0).permutation(y.size)
    cut = int(0.7 * y.size)
    fit, held = order[:cut], order[cut:]
    spec = {"spec_version": 1, "model": {"type": "mlp", "hidden": [32]},
            "objective": {"type": "empirical_risk", "loss": "logistic", "l2": l2,
                          "data": {"features": ref(directory, "xd.npz", sp.csr_matrix(x[fit])),
                                   "labels": ref(directory, "yd.npy", y[fit])}}}
    result, seconds = _timed_solve(spec, directory)
    began = time.perf_counter()
    peer = MLPClassifier(hidden_layer_sizes=(32,), max_iter=2000, random_state=0,
                         **({"alpha": l2 * fit.size} if l2 > 0 else {}))
    peer.fit(x[fit], y[fit])
    peer_seconds = time.perf_counter() - began
    return {"seconds": seconds, "peer_seconds": peer_seconds,
            "test_error": Mixture.from_result(result).error_rate(x[held], y[held]),
            "peer_test_error": float(np.mean(peer.predict(x[held]) != y[held])),
            "method": result.algorithm, "stats": _stats(result)}


def run_file(directory: Path, quick: bool, svrg: bool) -> dict:
    """A logistic objective (l2 = 1e-4) over an svmlight file (200,000 x 100 sparse rows;
    20,000 in quick mode), with defaults (``svrg`` False) or partitioned through SVRG OL
    (``solver.algorithm: "svrg_ol"``, the one setting that partitions a file), against
    scikit-learn reading the same file; quality against a tight scikit-learn optimum."""
    rows, features = (20_000 if quick else 200_000), 100
    path = directory / "big.svm"
    if not path.exists():
        x, y = classification(rows, features, 7)
        x = sp.csr_matrix(x * (np.random.default_rng(8).uniform(size=x.shape) < 0.1))
        x[:, -1] = 1.0
        dump_svmlight_file(x, y, str(path), zero_based=True)
    spec = {"spec_version": 1,
            "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 1e-4,
                          "data": {"features": {"uri": path.resolve().as_uri(),
                                                "format": "svmlight", "zero_based": True,
                                                "n_features": features}}}}
    if svrg:
        spec["solver"] = {"algorithm": "svrg_ol"}
    result, seconds = _timed_solve(spec, directory)
    began = time.perf_counter()
    x, y = load_svmlight_file(str(path), n_features=features, zero_based=True)
    peer = LogisticRegression(C=1.0 / (1e-4 * rows), fit_intercept=False, max_iter=10_000)
    peer.fit(x, y)
    peer_seconds = time.perf_counter() - began
    tight = LogisticRegression(C=1.0 / (1e-4 * rows), fit_intercept=False, tol=1e-12,
                               max_iter=100_000).fit(x, y)

    def value(w: np.ndarray) -> float:
        return float(np.logaddexp(0.0, -y * (x @ w)).mean() + 0.5e-4 * w @ w)

    return {"seconds": seconds, "peer_seconds": peer_seconds,
            "objective": value(np.asarray(result.mean.solution)),
            "peer_objective": value(peer.coef_.ravel()), "optimum": value(tight.coef_.ravel()),
            "method": result.algorithm, "stats": _stats(result)}


def _stats(result) -> dict:
    """The stats a row keeps: how the method stopped and why it was chosen."""
    keys = ("stopped_by", "method_reason", "iterations", "solve_s", "wall_s", "gap",
            "relative_gap", "certificate", "stopped_by_time_limit")
    return {key: result.stats[key] for key in keys if key in result.stats}
