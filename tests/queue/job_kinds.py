"""Small jobs of every kind a worker can be given, for checking that a warm worker compiles
nothing: every algorithm on every constraint type, every loss, the network, multiclass and
robust objectives, rate constraints under every game option, SVRG OL's learners and
schedules, the p-update modes, and data read from files of every format."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from worker.losses import LOSS_NAMES, PAIRWISE_HINGE, SOFTMAX_CROSS_ENTROPY
from worker.spec.models import ALGORITHMS, RATE_METRICS

D, N = 4, 24
LINEAR_ALGORITHMS = [a for a in ALGORITHMS if a != "auto"]
CONSTRAINTS = {
    "box only": [],
    "linear": [{"type": "linear", "A": [[1.0, 1.0, 0.0, 0.0], [0.0, -1.0, 1.0, 0.5]],
                "b": [0.5, 0.2]}],
    "ordering pairs": [{"type": "ordering", "pairs": [[0, 1], [2, 3]]}],
    "ordering chain": [{"type": "ordering", "chain": [3, 1, 0, 2]}],
    "lattice": [{"type": "monotone_lattice", "shape": [2, 2], "increasing": [0, 1]}],
    "lattice decreasing": [{"type": "monotone_lattice", "shape": [2, 2], "increasing": [1]}],
    "mixed": [{"type": "ordering", "pairs": [[0, 1]]},
              {"type": "linear", "A": [[1.0, 0.0, 1.0, 0.0]], "b": [0.3]}],
}


def _examples(seed: int, loss: str) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    scores = x @ np.array([1.0, -0.5, 0.25, 0.0])
    if loss == PAIRWISE_HINGE:
        return {"positive": x.tolist(), "negative": rng.normal(size=(N, D)).tolist()}
    if loss == "squared":
        return {"features": x.tolist(), "labels": scores.tolist()}
    if loss == SOFTMAX_CROSS_ENTROPY:
        return {"features": x.tolist(), "labels": (np.arange(N) % 3).astype(float).tolist()}
    return {"features": x.tolist(), "labels": np.where(scores > 0, 1.0, -1.0).tolist()}


def _risk(loss: str, seed: int = 0, **extra) -> dict:
    return {"type": "empirical_risk", "loss": loss, "data": _examples(seed, loss), **extra}


def _spec(objective: dict, constraints: list, **solver) -> dict:
    return {"dimension": D, "bounds": {"lower": -1.0, "upper": 1.0}, "objective": objective,
            "constraints": constraints, "solver": {"iterations": 400, **solver}}


def linear_jobs() -> dict[str, dict]:
    """Every algorithm without rates x constraint type, on hinge and on a quadratic."""
    quadratic = {"type": "quadratic", "Q": np.eye(D).tolist(), "c": [0.1, -0.2, 0.3, 0.0],
                 "l2": 0.01}
    jobs = {}
    for algorithm in LINEAR_ALGORITHMS:
        for name, constraints in CONSTRAINTS.items():
            jobs[f"{algorithm} hinge {name}"] = _spec(_risk("hinge", l2=0.01), constraints,
                                                      algorithm=algorithm)
            if algorithm != "svrg_ol":  # it samples examples; a quadratic has none
                jobs[f"{algorithm} quadratic {name}"] = _spec(quadratic, constraints,
                                                              algorithm=algorithm)
    return jobs


def loss_jobs() -> dict[str, dict]:
    """Every linear loss, with and without l1, on its auto algorithm and on LightTouch."""
    jobs = {}
    for loss in LOSS_NAMES:
        if loss == SOFTMAX_CROSS_ENTROPY:
            continue
        for l1 in (0.0, 0.01):
            for algorithm in ("auto", "lighttouch", "svrg_ol"):
                jobs[f"{loss} l1={l1} {algorithm}"] = _spec(
                    _risk(loss, l1=l1, l2=0.01), CONSTRAINTS["ordering chain"],
                    algorithm=algorithm)
    return jobs


def option_jobs() -> dict[str, dict]:
    """LightTouch's p-update modes and minibatches, SVRG OL's learners and schedules."""
    many = [{"type": "linear", "A": np.random.default_rng(1).normal(size=(40, D)).tolist(),
             "b": [1.0] * 40}]
    jobs = {}
    for p_update in ("dense", "lazy"):
        for aggregate in ("auto", 4):
            jobs[f"lighttouch p_update={p_update} aggregate={aggregate}"] = _spec(
                _risk("logistic"), many, algorithm="lighttouch", p_update=p_update,
                aggregate=aggregate, minibatch={"k_f": 3, "k_g": 2, "k_p": 5})
    for learner in ("adagrad", "freerex"):
        for schedule in ("practical", "theoretical"):
            jobs[f"svrg_ol {learner} {schedule}"] = _spec(
                _risk("logistic"), CONSTRAINTS["linear"], algorithm="svrg_ol",
                svrg={"learner": learner, "schedule": schedule, "workers": 0})
    return jobs


def _rate(metric: str, op: str = "<=", group: str | None = "a") -> dict:
    return {"type": "rate", "lhs": {"metric": metric, "group": group}, "op": op, "rhs": 0.6}


def game_jobs() -> dict[str, dict]:
    """Rate constraints (every metric) under both games and every game option, and the
    network, multiclass and robust objectives."""
    groups = {"a": [float(i % 2) for i in range(N)], "b": [float(i % 3 == 0) for i in range(N)]}
    risk = _risk("hinge")
    risk["data"]["groups"] = groups
    jobs = {}
    for algorithm in ("lagrangian", "proxy_lagrangian"):
        for regret in ("swap", "external"):
            for proxy in ("hinge", "ramp"):
                jobs[f"rates {algorithm} {regret} {proxy}"] = _spec(
                    risk, [_rate(metric) for metric in RATE_METRICS] + [_rate(
                        "error_rate", ">=", None)] + CONSTRAINTS["ordering pairs"],
                    algorithm=algorithm, game={"regret": regret, "proxy": proxy, "radius": 5.0})
        jobs[f"mlp softmax {algorithm}"] = {
            "dimension": D, "model": {"type": "mlp", "hidden": [3]},
            "objective": _risk(SOFTMAX_CROSS_ENTROPY),
            "solver": {"iterations": 300, "algorithm": algorithm}}
        jobs[f"mlp robust {algorithm}"] = {
            "dimension": D, "model": {"type": "mlp", "hidden": [3, 2]},
            "objective": {"type": "max_of", "terms": [_risk("logistic", 1), _risk("hinge", 2)]},
            "solver": {"iterations": 300, "algorithm": algorithm}}
        jobs[f"linear robust {algorithm}"] = _spec(
            {"type": "max_of", "terms": [_risk("logistic", 1), _risk("squared", 2)]}, [],
            algorithm=algorithm)
        jobs[f"linear softmax {algorithm}"] = {
            "dimension": D, "objective": _risk(SOFTMAX_CROSS_ENTROPY, l2=0.01),
            "solver": {"iterations": 300, "algorithm": algorithm}}
    return jobs


def file_jobs(folder: Path) -> dict[str, dict]:
    """The same classification problem with its examples in a file of every format."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(N, D))
    y = np.where(x[:, 0] > 0, 1.0, -1.0)
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", y)
    np.savez(folder / "x.npz", x=x)
    sp.save_npz(folder / "sparse.npz", sp.csr_matrix(x))
    np.savetxt(folder / "x.csv", x, delimiter=",", header="a,b,c,d", comments="")
    scipy.io.mmwrite(folder / "x.mtx", sp.coo_matrix(x))
    text = io.BytesIO()
    dump_svmlight_file(x, y, text)
    (folder / "xy.svm").write_bytes(text.getvalue())
    labels = {"uri": (folder / "y.npy").as_uri()}
    features = {"npy": {"uri": (folder / "x.npy").as_uri()},
                "npz": {"uri": (folder / "x.npz").as_uri()},
                "sparse npz": {"uri": (folder / "sparse.npz").as_uri()},
                "csv": {"uri": (folder / "x.csv").as_uri()},
                "mtx": {"uri": (folder / "x.mtx").as_uri()}}
    jobs = {f"hinge from {name}": _spec({"type": "empirical_risk", "loss": "hinge", "data": {
        "features": ref, "labels": labels}}, CONSTRAINTS["lattice"]) for name, ref in
        features.items()}
    for algorithm in ("auto", "svrg_ol"):
        jobs[f"svmlight {algorithm}"] = _spec({"type": "empirical_risk", "loss": "hinge", "data": {
            "features": {"uri": (folder / "xy.svm").as_uri()}}}, CONSTRAINTS["linear"],
            algorithm=algorithm)
    return jobs


def every_job(folder: Path) -> dict[str, dict]:
    """All of the above, by name."""
    return {**linear_jobs(), **loss_jobs(), **option_jobs(), **game_jobs(), **file_jobs(folder)}
