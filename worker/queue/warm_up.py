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

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numba.core.dispatcher import Dispatcher

from worker.algorithms.registry import ALGORITHMS
from worker.pipeline.solve import solve
from worker.problem.compile import DataSource, compile_problem
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import parse_spec

_FEATURES = [[1.0, 0.0, 1.0, 0.5], [0.0, 1.0, 1.0, -0.5], [0.5, 0.5, 0.0, 1.0]]
_LINEAR = {
    "dimension": 4, "bounds": {"lower": -1.0, "upper": 1.0},
    "objective": {"type": "empirical_risk", "loss": "hinge", "l2": 0.1,
                  "data": {"features": _FEATURES, "labels": [1.0, -1.0, 1.0]}},
    # against the data's direction: binding, so SVRG OL raises gamma (rebasing its weights)
    "constraints": [{"type": "ordering", "chain": [3, 2, 1, 0]}],
}
#: What every certified method takes (L-BFGS-B only smooth objectives with the box alone).
_SMOOTH = {**_LINEAR, "constraints": [],
           "objective": {"type": "empirical_risk", "loss": "squared", "l2": 0.1,
                         "data": {"features": _FEATURES, "labels": [1.0, -1.0, 0.5]}}}
_NETWORK = {
    "dimension": 4, "model": {"type": "mlp", "hidden": [2]},
    "objective": {"type": "empirical_risk", "loss": "softmax_cross_entropy",
                  "data": {"features": _FEATURES, "labels": [0.0, 1.0, 2.0]}},
}


def _with(spec: dict, **changes) -> dict:
    """``spec`` with top-level keys replaced."""
    return {**spec, **changes}


#: One tiny job per kind of kernel use; every iterative algorithm accepts the strongly convex
#: one, every certified one (exact, quasi-Newton) the smooth one with the box alone.
WARM_UP_JOBS: dict[str, dict] = {
    **{f"{name}: hinge, ordering (isotonic chain projection)":
       _with(_LINEAR, solver={"algorithm": name, "iterations": 2000})
       for name, algorithm in ALGORITHMS.items() if not algorithm.certified},
    **{f"{name}: squared loss, the box alone (one certified answer)":
       _with(_SMOOTH, solver={"algorithm": name})
       for name, algorithm in ALGORITHMS.items() if algorithm.certified},
    "lighttouch: lattice (isotonic projection on a partial order)": _with(
        _LINEAR, constraints=[{"type": "monotone_lattice", "shape": [2, 2],
                               "increasing": [0, 1]}],
        solver={"algorithm": "lighttouch", "iterations": 2000}),
    "exact_qp: quadratic objective (Q's PSD check on one BLAS thread)": _with(
        _SMOOTH, objective={"type": "quadratic", "Q": [[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                                                      [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]},
        constraints=_LINEAR["constraints"], solver={"algorithm": "exact_qp"}),
    "lagrangian: network (forward and backward passes)": _with(
        _NETWORK, solver={"algorithm": "lagrangian", "iterations": 200}),
    "lbfgsb: network (full-batch forward and backward passes)": _with(
        _NETWORK, solver={"algorithm": "lbfgsb"}),
}


def warm_up() -> None:
    """Solve each of :data:`WARM_UP_JOBS`, then SVRG OL on an svmlight file, in this process.

    None of them starts a thread pool (the problems are far too small, and SVRG OL's batch
    phase runs in process), so the process can fork afterwards.
    """
    for spec in WARM_UP_JOBS.values():
        solve(spec)
    _project_onto_a_lattice()
    with tempfile.TemporaryDirectory() as folder:
        rows = Path(folder) / "rows.svm"
        rows.write_bytes(b"1 1:0.5 4:1\n-1 2:1 3:0.5\n1 1:1 2:0.5\n")
        solve(_with(_LINEAR, objective={
            "type": "empirical_risk", "loss": "hinge", "l2": 0.1,
            "data": {"features": {"uri": rows.as_uri()}}},
            solver={"algorithm": "svrg_ol", "iterations": 2000, "svrg": {"workers": 0}}),
            roots=[Path(folder)])


def _project_onto_a_lattice() -> None:
    """Load the lattice's isotonic projection kernel: a tiny job's mean may satisfy its
    constraints already (then it is its own projection), so project a point that does not."""
    lattice = WARM_UP_JOBS["lighttouch: lattice (isotonic projection on a partial order)"]
    problem = compile_problem(parse_spec(lattice), DataSource([], data_settings()))
    project(np.array([1.0, 0.5, -0.5, -1.0]), problem.constraints, problem.lower,
            problem.upper)


def kernels() -> list[Dispatcher]:
    """The numba kernels of the ``worker`` package imported into this process."""
    found = {id(value): value for name, module in list(sys.modules.items())
             if name.startswith("worker.")
             for value in vars(module).values() if isinstance(value, Dispatcher)}
    return list(found.values())


def announced_warm_up(say: Callable[[str], None]) -> float:
    """:func:`warm_up`, saying at once what it loads and then how long it took; the seconds."""
    say(f"warming up {len(kernels())} numba kernels ({len(WARM_UP_JOBS) + 1} tiny jobs and a "
        "projection; seconds from numba's cache, minutes without it)...")
    start = time.perf_counter()
    warm_up()
    seconds = time.perf_counter() - start
    say(f"ready in {seconds:.1f} s")
    return seconds


def main() -> None:
    """Warm up, saying what and how long it took."""
    announced_warm_up(lambda line: print(line, flush=True))


if __name__ == "__main__":
    main()
