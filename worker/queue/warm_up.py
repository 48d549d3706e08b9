"""Warming a worker: load (or compile) every numba kernel a job can reach, before any fork.

RQ forks a work horse per job; kernels loaded in the worker are inherited, kernels that are
not are loaded or compiled by every horse again (seconds per job, minutes on a CPU the cache
was not built for). What a job reaches depends on its kind, so the warm-up solves one tiny
job per kind in :data:`WARM_UP_JOBS`, and SVRG OL on an svmlight file (the only format with
a parser kernel, read in partitions by SVRG OL's batch phase). ``tests/queue/test_warm_up.py``
runs a job of every algorithm, loss, constraint type, game option, model and data format in
a warmed process and fails naming any kernel that compiled, so a new kind that needs a new
entry here is caught.

Run as ``python -m worker.queue.warm_up`` (the image's build does, to fill numba's cache).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from worker.pipeline.solve import solve
from worker.spec.models import ALGORITHMS

_FEATURES = [[1.0, 0.0, 1.0, 0.5], [0.0, 1.0, 1.0, -0.5], [0.5, 0.5, 0.0, 1.0]]
_LINEAR = {
    "dimension": 4, "bounds": {"lower": -1.0, "upper": 1.0},
    "objective": {"type": "empirical_risk", "loss": "hinge", "l2": 0.1,
                  "data": {"features": _FEATURES, "labels": [1.0, -1.0, 1.0]}},
    # against the data's direction: binding, so SVRG OL raises gamma (rebasing its weights)
    "constraints": [{"type": "ordering", "chain": [3, 2, 1, 0]}],
}
_NETWORK = {
    "dimension": 4, "model": {"type": "mlp", "hidden": [2]},
    "objective": {"type": "empirical_risk", "loss": "softmax_cross_entropy",
                  "data": {"features": _FEATURES, "labels": [0.0, 1.0, 2.0]}},
}


def _with(spec: dict, **changes) -> dict:
    """``spec`` with top-level keys replaced."""
    return {**spec, **changes}


#: One tiny job per kind of kernel use; every algorithm accepts the strongly convex one.
WARM_UP_JOBS: dict[str, dict] = {
    **{f"{name}: hinge, ordering (isotonic chain projection)":
       _with(_LINEAR, solver={"algorithm": name, "iterations": 2000})
       for name in ALGORITHMS if name != "auto"},
    "lighttouch: lattice (isotonic projection on a partial order)": _with(
        _LINEAR, constraints=[{"type": "monotone_lattice", "shape": [2, 2],
                               "increasing": [0, 1]}],
        solver={"algorithm": "lighttouch", "iterations": 2000}),
    "lagrangian: network (forward and backward passes)": _with(
        _NETWORK, solver={"algorithm": "lagrangian", "iterations": 200}),
}


def warm_up() -> None:
    """Solve each of :data:`WARM_UP_JOBS`, then SVRG OL on an svmlight file, in this process.

    None of them starts a thread pool (the problems are far too small, and SVRG OL's batch
    phase runs in process), so the process can fork afterwards.
    """
    for spec in WARM_UP_JOBS.values():
        solve(spec)
    with tempfile.TemporaryDirectory() as folder:
        rows = Path(folder) / "rows.svm"
        rows.write_bytes(b"1 1:0.5 4:1\n-1 2:1 3:0.5\n1 1:1 2:0.5\n")
        solve(_with(_LINEAR, objective={
            "type": "empirical_risk", "loss": "hinge", "l2": 0.1,
            "data": {"features": {"uri": rows.as_uri()}}},
            solver={"algorithm": "svrg_ol", "iterations": 2000, "svrg": {"workers": 0}}),
            roots=[Path(folder)])


def main() -> None:
    """Warm up and say how long it took."""
    start = time.perf_counter()
    warm_up()
    print(f"numba kernels ready in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
